/**
 * Listing snapshots (every page of `GET /snapshots`).
 *
 * @module
 */
import { createControlClient } from "../../../client/control";
import type { ResourceContext } from "../../core/lifecycle";
import type { SnapshotsDataArgs, SnapshotsDataResult } from "./snapshots.args";

/** The `snapshots` data source's query: every snapshot matching the filters. */
export async function readSnapshots(
  args: SnapshotsDataArgs,
  ctx: ResourceContext,
): Promise<SnapshotsDataResult> {
  const client = createControlClient({ config: ctx.config });
  const query = { sandboxID: args.sandboxID, name: args.name };
  const snapshots: SnapshotsDataResult["snapshots"] = [];
  for await (const s of client.listSnapshots(query, { signal: ctx.signal }))
    snapshots.push({ snapshotID: s.snapshotID, names: s.names });
  return { snapshots };
}
