/**
 * The Snapshot resource (provider-neutral).
 *
 * @module
 */
export { snapshotDescriptor } from "./snapshot.descriptor";
export { snapshotLifecycle } from "./snapshot.lifecycle";
export { snapshotArgsSchema, snapshotChangeRules, snapshotOutputsSchema } from "./snapshot.args";
export type { SnapshotArgs, SnapshotOutputs } from "./snapshot.args";
