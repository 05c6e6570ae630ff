/**
 * The descriptor of the `snapshots` data source.
 *
 * @module
 */
import type { DataSourceDescriptor } from "../../core/descriptor";
import {
  snapshotsDataArgsSchema,
  snapshotsDataResultSchema,
  type SnapshotsDataArgs,
  type SnapshotsDataResult,
} from "./snapshots.args";
import { readSnapshots } from "./snapshots.read";

/** `snapshots`: the snapshots of a sandbox, or with a name, or all. */
export const snapshotsDataSource: DataSourceDescriptor<SnapshotsDataArgs, SnapshotsDataResult> = {
  kind: "data",
  typeName: "snapshots",
  description: "Lists snapshots, optionally only those of one sandbox or with one name.",
  args: snapshotsDataArgsSchema,
  result: snapshotsDataResultSchema,
  sensitiveOutputs: [],
  read: readSnapshots,
};
