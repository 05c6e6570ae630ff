/**
 * Inputs of the `Snapshot` resource: the zod schema, the inferred types, the
 * field docs and the change rules (as data, read by `diffByRules`).
 *
 * @module
 */
import { z } from "zod";
import type { ChangeRule } from "../core/lifecycle";
import { nameProblem, normaliseName } from "../template/template.names";

/** The zod schema of the Snapshot inputs. */
export const snapshotArgsSchema = z.strictObject({
  /** The sandbox to snapshot (running or paused). */
  sandboxID: z.string({ error: "must be a sandbox ID string" }).regex(/^[a-z0-9]+(-[a-z0-9]+)?$/, {
    error: 'must be a sandbox ID like "i1a2b3c4d5e6f7g8h9i0j"',
  }),
  /** The snapshot's name, `[namespace/]alias[:tag]`; a sandbox created from it uses this name as its template. */
  name: z
    .string({ error: "must be a string [namespace/]alias[:tag]" })
    .transform(normaliseName)
    .superRefine((name, ctx) => {
      const problem = nameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: `${problem}: e.g. "my-app-ready"` });
    }),
});

/** Snapshot inputs after `check` (normalised). */
export type SnapshotInputs = z.output<typeof snapshotArgsSchema>;
/** Snapshot inputs as a user writes them. */
export type SnapshotArgs = z.input<typeof snapshotArgsSchema>;

/** Outputs of the `Snapshot` resource: every input plus the snapshot's identity. */
export interface SnapshotOutputs extends SnapshotInputs {
  /** The snapshot ID, e.g. `my-app-ready:default`; usable as a `templateID` when creating sandboxes. */
  snapshotID: string;
  /** Every name of the snapshot, with namespace and tag. */
  names: string[];
}

/** A snapshot is immutable: any change takes a new one. */
export const snapshotChangeRules: Record<keyof SnapshotInputs, ChangeRule> = {
  sandboxID: "replace",
  name: "replace",
};
