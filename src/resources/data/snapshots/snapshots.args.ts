/**
 * The `snapshots` data source's data: filters and the snapshots found.
 *
 * @module
 */
import { z } from "zod";
import { sandboxIDSchema } from "../../core/fields";

/** The arguments of the `snapshots` data source. */
export const snapshotsDataArgsSchema = z.strictObject({
  sandboxID: sandboxIDSchema
    .optional()
    .meta({ description: "Only snapshots of this sandbox. Default: every sandbox." }),
  name: z
    .string()
    .min(1, { error: "must be a non-empty snapshot name" })
    .optional()
    .meta({ description: "Only snapshots with this name. Default: every name." }),
});

/** One snapshot. */
const snapshotInfoSchema = z.strictObject({
  snapshotID: z.string().meta({
    description: "The snapshot ID (e.g. my-app-ready:default); usable as a template.",
  }),
  names: z.array(z.string()).meta({ description: "Every name of the snapshot." }),
});

/** What the `snapshots` data source returns. */
export const snapshotsDataResultSchema = z.strictObject({
  snapshots: z
    .array(snapshotInfoSchema)
    .meta({ description: "Every matching snapshot (all pages)." }),
});

/** The `snapshots` data source's arguments. */
export type SnapshotsDataArgs = z.infer<typeof snapshotsDataArgsSchema>;
/** What the `snapshots` data source returns. */
export type SnapshotsDataResult = z.infer<typeof snapshotsDataResultSchema>;
