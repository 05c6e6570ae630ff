/**
 * The `sandboxMetrics` data source (provider-neutral).
 *
 * @module
 */
export { sandboxMetricsDataSource } from "./sandbox-metrics.descriptor";
export type { SandboxMetricsDataArgs, SandboxMetricsDataResult } from "./sandbox-metrics.args";
