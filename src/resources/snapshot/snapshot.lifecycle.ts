/**
 * The Snapshot resource: a named snapshot of a sandbox, usable as a template.
 * Immutable: any input change takes a new snapshot. The name is lower-cased
 * (as the service does) inside diff and create; outputs keep it as written.
 *
 * @module
 */
import { checkWithSchema } from "../core/check";
import { diffByRules } from "../core/diff";
import { throwIfStopped, uncancellable } from "../core/stop";
import { refTarget } from "../core/refs";
import type { ResourceLifecycle } from "../core/lifecycle";
import { normaliseTemplateName, parseTemplateName } from "../../wire/template-names";
import {
  snapshotArgsSchema,
  snapshotChangeRules,
  type SnapshotInputs,
  type SnapshotOutputs,
} from "./snapshot.args";
import { snapshotControl } from "./snapshot.control";

/** The name as the service uses it; a value not known yet (preview) is left alone. */
function normalise(inputs: Partial<SnapshotInputs>): Partial<SnapshotInputs> {
  return typeof inputs.name === "string"
    ? { ...inputs, name: normaliseTemplateName(inputs.name) }
    : inputs;
}

/** The Snapshot lifecycle. */
export const snapshotLifecycle: ResourceLifecycle<SnapshotInputs, SnapshotOutputs> = {
  typeName: "Snapshot",

  check(news, options) {
    return checkWithSchema(snapshotArgsSchema, news, options);
  },

  diff(rawOlds, rawNews, options) {
    const olds = normalise(rawOlds);
    const news = normalise(rawNews) as SnapshotInputs;
    // An imported snapshot has no recorded sandbox (the service does not tell):
    // the configuration's sandboxID is adopted, not a reason to snapshot again.
    const rules =
      rawOlds.sandboxID === undefined
        ? { ...snapshotChangeRules, sandboxID: "update" as const }
        : snapshotChangeRules;
    // A named snapshot's id is its name: a replacement under the same name
    // would be deleted by the old snapshot's delete. Delete the old one first.
    const sameName = options.isUnknown?.(news.name) === true || olds.name === news.name;
    return diffByRules(olds, news, rules, { ...options, deleteBeforeReplace: sameName });
  },

  async create(inputs, ctx) {
    const name = normaliseTemplateName(inputs.name);
    // A Provisioner's keptSandboxRef names the run it follows; the snapshot is of the sandbox.
    const sandboxID = refTarget(inputs.sandboxID);
    // Once begun, a snapshot is finished and kept even when stopped (core/stop.ts):
    // the service cannot stop one half-way.
    throwIfStopped(ctx, "snapshots.create", `taking snapshot ${name}`);
    const info = await snapshotControl(uncancellable(ctx)).createSnapshot(sandboxID, name);
    ctx.log(`snapshot ${info.snapshotID} taken of sandbox ${sandboxID}`);
    return {
      id: info.snapshotID,
      outputs: { ...inputs, snapshotID: info.snapshotID, names: info.names },
    };
  },

  async read(id, olds, ctx) {
    // Without state (import) the name is the snapshot ID without its tag.
    const name = olds ? normaliseTemplateName(olds.name) : parseTemplateName(id).name;
    const found = (await snapshotControl(ctx).listSnapshots({ name })).find(
      (s) => s.snapshotID === id,
    );
    if (!found) return undefined;
    const inputs = olds ?? ({ name } as SnapshotOutputs);
    return { id, outputs: { ...inputs, snapshotID: found.snapshotID, names: found.names } };
  },

  async update(_id, olds, news) {
    // Every input replaces; an update only carries unchanged inputs, or the
    // sandboxID an imported snapshot adopts. Nothing changes in the service.
    return { ...olds, ...news };
  },

  async delete(id, _olds, ctx) {
    await snapshotControl(ctx).deleteSnapshot(id);
  },
};
