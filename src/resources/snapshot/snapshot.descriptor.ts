/**
 * The descriptor of the `Snapshot` resource.
 *
 * @module
 */
import type { ResourceDescriptor } from "../core/descriptor";
import {
  snapshotArgsSchema,
  snapshotChangeRules,
  snapshotOutputRules,
  snapshotOutputsSchema,
  type SnapshotInputs,
  type SnapshotOutputs,
} from "./snapshot.args";
import { snapshotLifecycle } from "./snapshot.lifecycle";

/** `Snapshot`: a named snapshot of a sandbox, usable as a template; immutable. */
export const snapshotDescriptor: ResourceDescriptor<SnapshotInputs, SnapshotOutputs> = {
  kind: "resource",
  typeName: "Snapshot",
  description:
    "A named snapshot of a running or paused sandbox; the snapshot is a template (pass its snapshotID as the template of new sandboxes). Any change takes a new snapshot.",
  version: 0,
  args: snapshotArgsSchema,
  outputs: snapshotOutputsSchema,
  changeRules: snapshotChangeRules,
  outputRules: snapshotOutputRules,
  sensitiveInputs: [],
  sensitiveOutputs: [],
  replacement: {
    deleteFirst: true,
    reason: "a new snapshot with the same name needs the old one deleted first",
  },
  lifecycle: snapshotLifecycle,
};
