/**
 * The Provisioner's lifecycle: upload files (content-hashed, so an update moves
 * only what changed), run setup commands in order, optionally snapshot the
 * result into a template, and kill the sandbox it created unless asked to keep
 * it.
 *
 * Update semantics: when the sandbox lives on (an existing `sandboxID`, or a
 * kept sandbox that is still running) an update uploads only changed files,
 * removes undeclared ones and runs the commands again. When it does not (the
 * default: the sandbox was killed after provisioning), an update provisions a
 * fresh sandbox from the template, and a snapshot becomes a new build of the
 * same name.
 *
 * This file holds the resource's methods; one provisioning pass (list, sync,
 * run, snapshot) is `provision.ts`.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { SandboxIacError } from "../../errors";
import { unlessNotFound } from "../core/not-found";
import { checkWithSchema } from "../core/check";
import { diffByRules } from "../core/diff";
import { normaliseRunLines } from "../core/run-lines";
import type { ResourceLifecycle } from "../core/lifecycle";
import { compareManifest, digestOf } from "./manifest";
import {
  provisionerArgsSchema,
  provisionerChangeRules,
  provisionerSensitiveInputs,
  type ProvisionerArgs,
  type ProvisionerInputRecord,
  type ProvisionerOutputs,
} from "./provisioner.args";
import { controlFor, killQuietly, openWorkSandbox } from "./session";
import { keptOutputs, manifestOf, provisionFresh, provisionIn } from "./provision";

/**
 * Import is refused: the files, commands and triggers live only in the
 * configuration, and a sandbox does not tell what was put into it or run.
 */
function notImportable(id: string): SandboxIacError {
  return new SandboxIacError(
    "unsupported",
    `a Provisioner cannot be imported (id ${JSON.stringify(id)}): its files and commands exist only in your configuration, not in the service. Declare it and apply instead; an existing sandbox can be worked in with sandboxID`,
    { operation: "provisioner.import", resourceId: id },
  );
}

function newId(): string {
  return `prov-${randomBytes(8).toString("hex")}`;
}

/** `inputs` with each command's `run` as the one line it means (for comparing only). */
function withJoinedRuns<T extends { commands?: unknown }>(inputs: T): T {
  if (!Array.isArray(inputs.commands)) return inputs;
  const commands: unknown[] = inputs.commands.map((c: unknown) =>
    c !== null && typeof c === "object" && "run" in c ? { ...c, run: normaliseRunLines(c.run) } : c,
  );
  return { ...inputs, commands };
}

/** The Provisioner resource. */
export const provisionerLifecycle: ResourceLifecycle<ProvisionerArgs, ProvisionerOutputs> = {
  typeName: "Provisioner",

  check(news, options) {
    return checkWithSchema(provisionerArgsSchema, news, options, provisionerSensitiveInputs);
  },

  async diff(olds, news, options) {
    // A snapshot's id is its name: the replacement's snapshot would be the very
    // template the old Provisioner's delete removes. Delete the old one first.
    const sameSnapshot =
      olds.snapshotID !== undefined &&
      news.snapshot !== undefined &&
      (options.isUnknown?.(news.snapshot.name) === true ||
        olds.snapshot?.name === news.snapshot.name);
    // A command's `run` compares by the line it means: "a" and ["a"] run the same.
    const result = diffByRules<ProvisionerInputRecord>(
      withJoinedRuns(olds),
      withJoinedRuns(news),
      provisionerChangeRules,
      { ...options, deleteBeforeReplace: sameSnapshot },
    );
    // A kept sandbox killed out of band (read dropped its id) is provisioned again.
    if (
      news.keepSandbox === true &&
      news.sandboxID === undefined &&
      olds.keptSandboxID === undefined &&
      !result.replaces.length &&
      !result.updates.includes("keepSandbox")
    ) {
      result.updates.push("keepSandbox");
      result.changes = true;
    }
    // Same declarations, different local content: the files must move again.
    if (
      !result.updates.includes("files") &&
      !result.replaces.includes("files") &&
      !options.isUnknown?.(news.files)
    ) {
      const manifest = await manifestOf(news, options.baseDir);
      const changes = compareManifest(olds.fileDigest, manifest);
      if (changes.upload.length + changes.remove.length > 0) {
        result.updates.push("files");
        result.changes = true;
      }
    }
    return result;
  },

  async planOutputs(inputs, options) {
    // The digest create and update store: a missing source fails here, at plan time.
    return { fileDigest: digestOf(await manifestOf(inputs, options.baseDir)) };
  },

  async create(inputs, ctx) {
    const { result, keptSandboxID } = await provisionFresh(inputs, ctx);
    const outputs: ProvisionerOutputs = { ...inputs, ...result, ...keptOutputs(keptSandboxID) };
    return { id: keptSandboxID ?? inputs.sandboxID ?? newId(), outputs };
  },

  async read(id, olds, ctx) {
    if (!olds) throw notImportable(id);
    const control = controlFor(ctx);
    const live = olds.keptSandboxID ?? olds.sandboxID;
    const options = { signal: ctx.signal };
    let outputs = olds;
    if (live !== undefined) {
      const found = await unlessNotFound(control.getSandbox(live, options), undefined);
      // Without a snapshot the sandbox was all there was. With one, the
      // resource stays (minus the sandbox): its delete owns the snapshot,
      // which would otherwise be orphaned.
      if (!found && olds.snapshotID === undefined) return undefined;
      if (!found) {
        const { keptSandboxID: _gone, keptSandboxRef: _goneRef, ...rest } = olds;
        outputs = rest;
      }
    }
    if (olds.snapshotID !== undefined && olds.snapshot) {
      const found = await unlessNotFound(
        control.getTemplateByAlias(olds.snapshot.name, options),
        undefined,
      );
      if (!found) return undefined;
    }
    return { id, outputs };
  },

  async update(_id, olds, news, ctx) {
    const live = olds.keptSandboxID ?? news.sandboxID;
    if (live !== undefined) {
      // The sandbox lives on: move only what changed, then run again.
      const manifest = await manifestOf(news, ctx.baseDir);
      const session = await openWorkSandbox(ctx, live);
      const result = await provisionIn(session, news, ctx, {
        manifest,
        previous: olds.fileDigest,
        runCommands: true,
      });
      return { ...news, ...result, ...keptOutputs(olds.keptSandboxID) };
    }
    // Without a live sandbox the update is a first upload into a fresh one.
    const { result, keptSandboxID } = await provisionFresh(news, ctx);
    return { ...news, ...result, ...keptOutputs(keptSandboxID) };
  },

  async delete(_id, olds, ctx) {
    const control = controlFor(ctx);
    if (olds.keptSandboxID !== undefined) await killQuietly(control, olds.keptSandboxID);
    if (olds.snapshotID !== undefined) {
      await unlessNotFound(
        control.deleteTemplate(olds.snapshotID, { signal: ctx.signal }),
        undefined,
      );
    }
  },
};
