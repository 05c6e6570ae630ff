/**
 * The `snapshots` data source (provider-neutral).
 *
 * @module
 */
export { snapshotsDataSource } from "./snapshots.descriptor";
export type { SnapshotsDataArgs, SnapshotsDataResult } from "./snapshots.args";
