/**
 * The Snapshot resource: a named snapshot of a sandbox, usable as a template.
 * Immutable: any input change takes a new snapshot.
 *
 * @module
 */
import { checkWithSchema } from "../core/check";
import { diffByRules } from "../core/diff";
import type { ResourceLifecycle } from "../core/lifecycle";
import {
  snapshotArgsSchema,
  snapshotChangeRules,
  type SnapshotInputs,
  type SnapshotOutputs,
} from "./snapshot.args";
import { snapshotControl } from "./snapshot.control";

/** The Snapshot lifecycle. */
export const snapshotLifecycle: ResourceLifecycle<SnapshotInputs, SnapshotOutputs> = {
  typeName: "Snapshot",

  check(news, options) {
    return checkWithSchema(snapshotArgsSchema, news, options);
  },

  diff(olds, news, options = {}) {
    // A named snapshot's id is its name: a replacement under the same name
    // would be deleted by the old snapshot's delete. Delete the old one first.
    const sameName = options.isUnknown?.(news.name) === true || olds.name === news.name;
    return diffByRules(olds, news, snapshotChangeRules, {
      ...options,
      deleteBeforeReplace: sameName,
    });
  },

  async create(inputs, ctx) {
    const info = await snapshotControl(ctx).createSnapshot(inputs.sandboxID, inputs.name);
    ctx.log(`snapshot ${info.snapshotID} taken of sandbox ${inputs.sandboxID}`);
    return {
      id: info.snapshotID,
      outputs: { ...inputs, snapshotID: info.snapshotID, names: info.names },
    };
  },

  async read(id, olds, ctx) {
    const found = (await snapshotControl(ctx).listSnapshots({ name: olds.name })).find(
      (s) => s.snapshotID === id,
    );
    return found
      ? { id, outputs: { ...olds, snapshotID: found.snapshotID, names: found.names } }
      : undefined;
  },

  async update(_id, olds, news) {
    // Every input replaces; an update only ever carries unchanged inputs.
    return { ...olds, ...news };
  },

  async delete(id, _olds, ctx) {
    await snapshotControl(ctx).deleteSnapshot(id);
  },
};
