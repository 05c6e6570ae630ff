/**
 * The `sandboxes` data source's data: filters and the listed sandboxes.
 *
 * @module
 */
import { z } from "zod";

/** The arguments of the `sandboxes` data source. */
export const sandboxesDataArgsSchema = z.strictObject({
  metadata: z.record(z.string(), z.string()).optional().meta({
    description:
      "Only sandboxes whose metadata holds every one of these pairs. Default: no filter.",
  }),
  state: z
    .array(z.enum(["running", "paused"], { error: 'must be "running" or "paused"' }))
    .optional()
    .meta({ description: "Only sandboxes in these states. Default: running and paused." }),
});

/** One listed sandbox. */
const listedSandboxSchema = z.strictObject({
  sandboxID: z.string().meta({ description: "The sandbox ID." }),
  templateID: z.string().meta({ description: "The template the sandbox was created from." }),
  alias: z.string().optional().meta({ description: "The template's alias, when it has one." }),
  clientID: z.string().meta({ description: "The client ID (deprecated by the service)." }),
  startedAt: z.string().meta({ description: "When the sandbox started (RFC 3339)." }),
  endAt: z.string().meta({ description: "When the sandbox will be killed (RFC 3339)." }),
  envdVersion: z.string().meta({ description: "The envd version inside the sandbox." }),
  cpuCount: z.number().meta({ description: "vCPUs of the sandbox." }),
  memoryMB: z.number().meta({ description: "Memory of the sandbox in MiB." }),
  diskSizeMB: z.number().meta({ description: "Disk size of the sandbox in MiB." }),
  state: z.enum(["running", "paused"]).meta({ description: "running or paused." }),
  metadata: z
    .record(z.string(), z.string())
    .meta({ description: "The sandbox's metadata pairs (empty when none)." }),
  volumeMounts: z
    .array(
      z.strictObject({
        name: z.string().meta({ description: "The volume's name." }),
        path: z.string().meta({ description: "Where the volume is mounted in the sandbox." }),
      }),
    )
    .meta({ description: "Volumes mounted in the sandbox." }),
});

/** What the `sandboxes` data source returns. */
export const sandboxesDataResultSchema = z.strictObject({
  sandboxes: z
    .array(listedSandboxSchema)
    .meta({ description: "Every matching sandbox (all pages), newest first." }),
});

/** The `sandboxes` data source's arguments. */
export type SandboxesDataArgs = z.infer<typeof sandboxesDataArgsSchema>;
/** One listed sandbox. */
export type ListedSandboxFields = z.infer<typeof listedSandboxSchema>;
/** What the `sandboxes` data source returns. */
export type SandboxesDataResult = z.infer<typeof sandboxesDataResultSchema>;
