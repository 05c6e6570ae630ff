/**
 * The `sandboxMetrics` data source's data: a sandbox, a time range, and the
 * metric samples in it.
 *
 * @module
 */
import { z } from "zod";
import { sandboxIDSchema } from "../../core/fields";
import { sandboxMetricSchema } from "../../core/sandbox-fields";

const unixSeconds = z.number().int().min(0, { error: "must be unix seconds >= 0" });

/** The arguments of the `sandboxMetrics` data source. */
export const sandboxMetricsDataArgsSchema = z.strictObject({
  sandboxID: sandboxIDSchema.meta({ description: "The sandbox whose metrics to read." }),
  start: unixSeconds
    .optional()
    .meta({ description: "Start of the range, unix seconds. Default: the sandbox's start." }),
  end: unixSeconds
    .optional()
    .meta({ description: "End of the range, unix seconds. Default: now." }),
});

/** One metric sample: the fields of the latest sample, plus its RFC 3339 time and the page cache. */
const metricSampleSchema = sandboxMetricSchema.extend({
  timestamp: z.string().meta({ description: "When the sample was taken (RFC 3339)." }),
  memCache: z.number().meta({ description: "Memory used by the page cache, bytes." }),
});

/** What the `sandboxMetrics` data source returns. */
export const sandboxMetricsDataResultSchema = z.strictObject({
  metrics: z
    .array(metricSampleSchema)
    .meta({ description: "The samples in the range, as the service returns them." }),
});

/** The `sandboxMetrics` data source's arguments. */
export type SandboxMetricsDataArgs = z.infer<typeof sandboxMetricsDataArgsSchema>;
/** What the `sandboxMetrics` data source returns. */
export type SandboxMetricsDataResult = z.infer<typeof sandboxMetricsDataResultSchema>;
