/**
 * The descriptor of the `sandboxMetrics` data source.
 *
 * @module
 */
import type { DataSourceDescriptor } from "../../core/descriptor";
import {
  sandboxMetricsDataArgsSchema,
  sandboxMetricsDataResultSchema,
  type SandboxMetricsDataArgs,
  type SandboxMetricsDataResult,
} from "./sandbox-metrics.args";
import { readSandboxMetrics } from "./sandbox-metrics.read";

/** `sandboxMetrics`: the metric samples of a sandbox in a time range. */
export const sandboxMetricsDataSource: DataSourceDescriptor<
  SandboxMetricsDataArgs,
  SandboxMetricsDataResult
> = {
  kind: "data",
  typeName: "sandboxMetrics",
  description: "Reads the metric samples of a sandbox between start and end (unix seconds).",
  args: sandboxMetricsDataArgsSchema,
  result: sandboxMetricsDataResultSchema,
  sensitiveOutputs: [],
  read: readSandboxMetrics,
};
