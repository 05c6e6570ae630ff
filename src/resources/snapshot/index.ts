/**
 * The Snapshot resource (provider-neutral).
 *
 * @module
 */
export { snapshotLifecycle } from "./snapshot.lifecycle";
export { snapshotArgsSchema, snapshotChangeRules } from "./snapshot.args";
export type { SnapshotArgs, SnapshotInputs, SnapshotOutputs } from "./snapshot.args";
