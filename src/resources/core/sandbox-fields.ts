/**
 * One sandbox as the resources see it: the query (`sandboxID`,
 * `includeMetrics`) and the fields read back. The `sandbox` data source takes
 * and returns them; the `SandboxReader` resource has them as inputs and outputs.
 *
 * @module
 */
import { z } from "zod";
import { sandboxIDSchema } from "./fields";

/** The query of one sandbox. */
export const sandboxQuerySchema = z.strictObject({
  sandboxID: sandboxIDSchema.meta({ description: "The sandbox to read (running or paused)." }),
  includeMetrics: z.boolean({ error: "must be true or false" }).optional().meta({
    description: "Also read the latest resource metric sample. Default: false, no `metrics`.",
  }),
});

/** A metric sample of a sandbox, as the resources report it. */
export const sandboxMetricSchema = z.strictObject({
  timestampUnix: z.number().meta({ description: "When the sample was taken, unix seconds." }),
  cpuCount: z.number().meta({ description: "vCPUs of the sandbox." }),
  cpuUsedPct: z.number().meta({ description: "CPU use in percent." }),
  memUsed: z.number().meta({ description: "Memory used, bytes." }),
  memTotal: z.number().meta({ description: "Memory available, bytes." }),
  diskUsed: z.number().meta({ description: "Disk used, bytes." }),
  diskTotal: z.number().meta({ description: "Disk size, bytes." }),
});

/** The mounts of a sandbox's volumes. */
const volumeMountsSchema = z
  .array(
    z.strictObject({
      name: z.string().meta({ description: "The volume's name." }),
      path: z.string().meta({ description: "Where the volume is mounted in the sandbox." }),
    }),
  )
  .meta({ description: "Volumes mounted in the sandbox." });

/**
 * The fields a sandbox has both listed (`GET /v2/sandboxes`) and read alone
 * (`GET /sandboxes/{id}`), besides its ID and volume mounts (spread so each
 * schema keeps its field order).
 */
const sandboxCommonShape = {
  templateID: z.string().meta({ description: "The template the sandbox was created from." }),
  alias: z.string().optional().meta({ description: "The template's alias, when it has one." }),
  clientID: z.string().meta({ description: "The client ID (deprecated by the service)." }),
  startedAt: z.string().meta({ description: "When the sandbox started (RFC 3339)." }),
  endAt: z
    .string()
    .meta({ description: "When the sandbox will be killed unless extended (RFC 3339)." }),
  envdVersion: z.string().meta({ description: "The envd version inside the sandbox." }),
  cpuCount: z.number().meta({ description: "vCPUs of the sandbox." }),
  memoryMB: z.number().meta({ description: "Memory of the sandbox in MiB." }),
  diskSizeMB: z.number().meta({ description: "Disk size of the sandbox in MiB." }),
  state: z.enum(["running", "paused"]).meta({ description: "running or paused." }),
  metadata: z
    .record(z.string(), z.string())
    .meta({ description: "The sandbox's metadata pairs (empty when none)." }),
};

/** One listed sandbox (`sandboxes` data source). */
export const listedSandboxFieldsSchema = z.strictObject({
  sandboxID: z.string().meta({ description: "The sandbox ID." }),
  ...sandboxCommonShape,
  volumeMounts: volumeMountsSchema,
});

/** The fields of one sandbox (`GET /sandboxes/{id}`), besides its ID. */
export const sandboxFieldsSchema = z.strictObject({
  ...sandboxCommonShape,
  envdAccessToken: z.string().meta({
    description:
      "Token of the sandbox interface; sensitive. Empty for a sandbox created without one.",
  }),
  domain: z
    .string()
    .nullable()
    .meta({ description: "The domain the sandbox is served on; null for the default." }),
  volumeMounts: volumeMountsSchema,
  metrics: sandboxMetricSchema.optional().meta({
    description: "The latest metric sample, with includeMetrics and when one exists.",
  }),
});

/** The query of one sandbox. */
export type SandboxQuery = z.infer<typeof sandboxQuerySchema>;
/** One sandbox's fields. */
export type SandboxFields = z.infer<typeof sandboxFieldsSchema>;
/** One listed sandbox's fields. */
export type ListedSandboxFields = z.infer<typeof listedSandboxFieldsSchema>;
/** The latest metric sample of a sandbox. */
export type SandboxMetricSample = z.infer<typeof sandboxMetricSchema>;
/** Outputs that are secrets. */
export const sandboxSensitiveOutputs = ["envdAccessToken"] as const;
