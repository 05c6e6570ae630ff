/**
 * Reading a sandbox's metric samples in a time range.
 *
 * @module
 */
import { createControlClient } from "../../../client/control";
import { sandboxMetricMeasures } from "../../../wire/sandbox-metric";
import type { ResourceContext } from "../../core/lifecycle";
import type { SandboxMetricsDataArgs, SandboxMetricsDataResult } from "./sandbox-metrics.args";

/** The `sandboxMetrics` data source's query; `not_found` when the sandbox does not exist. */
export async function readSandboxMetrics(
  args: SandboxMetricsDataArgs,
  ctx: ResourceContext,
): Promise<SandboxMetricsDataResult> {
  const client = createControlClient({ config: ctx.config });
  const range = { start: args.start, end: args.end };
  const samples = await client.getSandboxMetrics(args.sandboxID, range, { signal: ctx.signal });
  return {
    metrics: samples.map((s) => ({
      timestampUnix: s.timestampUnix,
      timestamp: s.timestamp,
      ...sandboxMetricMeasures(s),
    })),
  };
}
