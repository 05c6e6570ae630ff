/**
 * The `Snapshot` resource's data: the inputs and outputs schemas, the inferred
 * types, and how each input and output behaves on a change.
 *
 * @module
 */
import { z } from "zod";
import type { OutputRule } from "../core/descriptor";
import type { ChangeRule } from "../core/lifecycle";
import { sandboxRefSchema, templateNameSchema } from "../core/fields";

/** The zod schema of the Snapshot inputs (validation only: the name is not rewritten). */
export const snapshotArgsSchema = z.strictObject({
  sandboxID: sandboxRefSchema.meta({
    description:
      "The sandbox to snapshot (running or paused): its ID, or a Provisioner's `keptSandboxRef` so that every run of the Provisioner takes a new snapshot. A change takes a new snapshot.",
  }),
  name: templateNameSchema("my-app-ready").meta({
    description:
      "The snapshot's name, [namespace/]alias[:tag], lower-cased by the service; sandboxes created from it use it as their template. A change takes a new snapshot.",
  }),
});

/** Snapshot inputs (as given; check changes nothing). */
export type SnapshotInputs = z.infer<typeof snapshotArgsSchema>;
/** Snapshot inputs as a user writes them. */
export type SnapshotArgs = SnapshotInputs;

/** The outputs of the Snapshot besides its inputs. */
export const snapshotOutputsSchema = z.strictObject({
  snapshotID: z.string().meta({
    description:
      "The snapshot ID, e.g. my-app-ready:default; usable as a template ID when creating sandboxes.",
  }),
  names: z
    .array(z.string())
    .meta({ description: "Every name of the snapshot, with namespace and tag." }),
});

/**
 * Outputs of the `Snapshot` resource: every input plus the snapshot's
 * identity. `sandboxID` is absent after an import (the service does not
 * record which sandbox a snapshot came from).
 */
export type SnapshotOutputs = SnapshotInputs & z.infer<typeof snapshotOutputsSchema>;

/** A snapshot is immutable: any change takes a new one. */
export const snapshotChangeRules: Record<keyof SnapshotInputs, ChangeRule> = {
  sandboxID: "replace",
  name: "replace",
};

/** Nothing is ever updated in place: the outputs stay. */
export const snapshotOutputRules: Record<keyof z.infer<typeof snapshotOutputsSchema>, OutputRule> =
  {
    snapshotID: "stable",
    names: "stable",
  };
