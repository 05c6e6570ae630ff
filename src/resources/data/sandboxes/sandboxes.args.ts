/**
 * The `sandboxes` data source's data: filters and the listed sandboxes.
 *
 * @module
 */
import { z } from "zod";
import { listedSandboxFieldsSchema } from "../../core/sandbox-fields";

export type { ListedSandboxFields } from "../../core/sandbox-fields";

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

/** What the `sandboxes` data source returns. */
export const sandboxesDataResultSchema = z.strictObject({
  sandboxes: z
    .array(listedSandboxFieldsSchema)
    .meta({ description: "Every matching sandbox (all pages), newest first." }),
});

/** The `sandboxes` data source's arguments. */
export type SandboxesDataArgs = z.infer<typeof sandboxesDataArgsSchema>;
/** What the `sandboxes` data source returns. */
export type SandboxesDataResult = z.infer<typeof sandboxesDataResultSchema>;
