/**
 * The control-API calls the Snapshot resource makes, as a narrow port over the
 * typed control client.
 *
 * @module
 */
import { createControlClient } from "../../client/control";
import { unlessNotFound } from "../core/not-found";
import type { ResourceContext } from "../core/lifecycle";

/** `SnapshotInfo`. */
interface SnapshotInfo {
  snapshotID: string;
  names: string[];
}

/** The control calls of the Snapshot resource. Every call throws `SandboxIacError`. */
export interface SnapshotControl {
  createSnapshot(sandboxID: string, name: string): Promise<SnapshotInfo>;
  /** Every snapshot with that name (all pages). */
  listSnapshots(query: { name?: string; sandboxID?: string }): Promise<SnapshotInfo[]>;
  /** Resolves false when the snapshot was already gone. */
  deleteSnapshot(snapshotID: string): Promise<boolean>;
}

/** Builds the port from the resource context (the control client over `ctx.config`). */
export function snapshotControl(ctx: ResourceContext): SnapshotControl {
  const client = createControlClient({ config: ctx.config });
  const options = ctx.signal ? { signal: ctx.signal } : {};
  return {
    createSnapshot: (sandboxID, name) => client.createSnapshot(sandboxID, { name }, options),
    async listSnapshots(query) {
      const all: SnapshotInfo[] = [];
      for await (const snapshot of client.listSnapshots(query, options)) all.push(snapshot);
      return all;
    },
    deleteSnapshot: (snapshotID) =>
      unlessNotFound(
        client.deleteTemplate(snapshotID, options).then(() => true),
        false,
      ),
  };
}
