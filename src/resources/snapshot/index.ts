/**
 * The Snapshot resource (provider-neutral).
 *
 * @module
 */
export { snapshotDescriptor } from "./snapshot.descriptor";
export { snapshotLifecycle } from "./snapshot.lifecycle";
export {
  snapshotArgsSchema,
  snapshotChangeRules,
  snapshotOutputRules,
  snapshotOutputsSchema,
} from "./snapshot.args";
export type { SnapshotArgs, SnapshotInputs, SnapshotOutputs } from "./snapshot.args";
