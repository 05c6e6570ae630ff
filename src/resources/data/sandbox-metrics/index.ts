/**
 * The `sandboxMetrics` data source (provider-neutral).
 *
 * @module
 */
export { sandboxMetricsDataSource } from "./sandbox-metrics.descriptor";
export {
  metricSampleSchema,
  sandboxMetricsDataArgsSchema,
  sandboxMetricsDataResultSchema,
} from "./sandbox-metrics.args";
export type { SandboxMetricsDataArgs, SandboxMetricsDataResult } from "./sandbox-metrics.args";
export { readSandboxMetrics } from "./sandbox-metrics.read";
