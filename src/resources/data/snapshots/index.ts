/**
 * The `snapshots` data source (provider-neutral).
 *
 * @module
 */
export { snapshotsDataSource } from "./snapshots.descriptor";
export {
  snapshotInfoSchema,
  snapshotsDataArgsSchema,
  snapshotsDataResultSchema,
} from "./snapshots.args";
export type { SnapshotsDataArgs, SnapshotsDataResult } from "./snapshots.args";
export { readSnapshots } from "./snapshots.read";
