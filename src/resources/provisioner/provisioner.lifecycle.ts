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
 * @module
 */
import { randomBytes } from "node:crypto";
import { SandboxIacError } from "../../errors";
import { unlessNotFound } from "../core/not-found";
import { checkWithSchema } from "../core/check";
import { versionedRef } from "../core/refs";
import { diffByRules } from "../core/diff";
import { throwIfStopped } from "../core/stop";
import { normaliseRunLines } from "../core/run-lines";
import type { ResourceContext, ResourceLifecycle } from "../core/lifecycle";
import { runCommands } from "./commands";
import { HashCache } from "./hash-cache";
import {
  buildManifest,
  checkSources,
  compareManifest,
  digestOf,
  type Manifest,
  type ManifestDigest,
} from "./manifest";
import type { ManifestEntry } from "./manifest-entry";
import {
  provisionerArgsSchema,
  provisionerChangeRules,
  provisionerSensitiveInputs,
  type ProvisionerArgs,
  type ProvisionerInputRecord,
  type ProvisionerOutputs,
} from "./provisioner.args";
import { controlFor, killQuietly, openWorkSandbox, withSession, type WorkSession } from "./session";
import { removeFiles, syncFiles, type SyncOptions } from "./sync";
import { EarlyArchive, type StartedArchive } from "./early-archive";

const DEFAULT_CONCURRENCY = 8;

function syncOptions(args: ProvisionerArgs, ctx: ResourceContext): SyncOptions {
  return {
    concurrency: args.concurrency ?? DEFAULT_CONCURRENCY,
    // One stream per file unless parts are asked for: here joining parts writes
    // the file twice and measured slower than one stream (bench/provisioner.js).
    partSizeBytes: args.partSizeMB !== undefined ? args.partSizeMB * 1024 * 1024 : undefined,
    log: ctx.log,
    signal: ctx.signal,
  };
}

/**
 * The manifest of `args.files`. With `firstUpload` (nothing in the sandbox to
 * compare with), small files' hashes come from the bytes the upload sends
 * (`deferred-hashes.ts`).
 */
async function manifestOf(
  args: ProvisionerArgs,
  baseDir: string,
  firstUpload = false,
  early?: EarlyArchive,
): Promise<Manifest> {
  // Hashes of files unchanged since the last plan or apply come from the
  // local cache, read while the tree is walked.
  const cache = HashCache.open(baseDir);
  return buildManifest(args.files ?? [], baseDir, {
    cache,
    deferHashes: firstUpload,
    onFile: early && ((entry, deferred) => early.add(entry, deferred)),
  });
}

/** The files of `files` not in `upload`. */
function unchangedOf(files: readonly ManifestEntry[], upload: readonly ManifestEntry[]) {
  const uploading = new Set(upload);
  return files.filter((f) => !uploading.has(f));
}

/** One provisioning pass in `session`: sync, run, snapshot. */
async function provisionIn(
  session: WorkSession,
  args: ProvisionerArgs,
  ctx: ResourceContext,
  plan: {
    manifest: Manifest;
    previous?: ManifestDigest | undefined;
    /** An archive of a first upload started while listing. */
    early?: StartedArchive | undefined;
    runCommands: boolean;
  },
): Promise<Omit<ProvisionerOutputs, keyof ProvisionerArgs | KeptOutput>> {
  const options = syncOptions(args, ctx);
  const deferred = plan.manifest.deferred;
  // A comparison needs every hash; only a first upload takes them as it sends.
  if (plan.previous !== undefined) await deferred?.finish();
  else options.deferred = deferred;
  const changes = compareManifest(plan.previous, plan.manifest);
  if (changes.remove.length > 0) await removeFiles(session.sandbox, changes.remove, options);
  const bytesUploaded = await syncFiles(
    session.sandbox,
    plan.manifest.dirs,
    changes.upload,
    options,
    // Unchanged files of the previous run are in place, and so are their directories.
    plan.previous ? unchangedOf(plan.manifest.files, changes.upload) : [],
    plan.early,
  );
  // The hashes not taken while sending, and the cache stored: the digest is complete.
  await deferred?.finish();
  ctx.log(
    `uploaded ${changes.upload.length} file(s), ${bytesUploaded} bytes; removed ${changes.remove.length}`,
  );
  const commands = plan.runCommands ? (args.commands ?? []) : [];
  await runCommands(session.sandbox, commands, ctx.log, ctx.signal);
  const outputs: Omit<ProvisionerOutputs, keyof ProvisionerArgs | KeptOutput> = {
    fileDigest: digestOf(plan.manifest),
    commandsRun: commands.length,
    bytesUploaded,
  };
  if (args.snapshot) {
    // Once begun, a snapshot is finished and kept even when stopped (core/stop.ts).
    throwIfStopped(ctx, "provisioner.snapshot", `taking snapshot ${args.snapshot.name}`);
    const snapshot = await session.control.createSnapshot(session.sandboxID, {
      name: args.snapshot.name,
    });
    ctx.log(`snapshot ${snapshot.snapshotID} taken of sandbox ${session.sandboxID}`);
    outputs.snapshotID = snapshot.snapshotID;
    outputs.snapshotNames = snapshot.names;
  }
  return outputs;
}

/** The outputs about a kept sandbox. */
type KeptOutput = "keptSandboxID" | "keptSandboxRef";

/**
 * The kept sandbox's outputs after a run: its ID, and a reference that
 * changes with every run (`core/refs.ts`), so a Snapshot of it is retaken.
 */
function keptOutputs(keptSandboxID: string | undefined): Pick<ProvisionerOutputs, KeptOutput> {
  if (keptSandboxID === undefined) return {};
  return {
    keptSandboxID,
    keptSandboxRef: versionedRef(keptSandboxID, `run-${randomBytes(6).toString("hex")}`),
  };
}

/**
 * Provisions a sandbox with nothing in it yet (a create, or an update whose
 * sandbox is gone). A missing source fails before any sandbox is opened; the
 * listing then runs while the sandbox is created or looked up, and small
 * files start going up while the rest is still listed (`early-archive.ts`).
 */
async function provisionFresh(
  args: ProvisionerArgs,
  ctx: ResourceContext,
): Promise<{
  result: Omit<ProvisionerOutputs, keyof ProvisionerArgs | KeptOutput>;
  keptSandboxID?: string;
}> {
  await checkSources(args.files ?? [], ctx.baseDir);
  const early = EarlyArchive.of(args.files ?? [], { log: ctx.log, signal: ctx.signal });
  const listing = manifestOf(args, ctx.baseDir, true, early).then(
    (manifest) => {
      early?.end();
      return manifest;
    },
    (error: unknown) => {
      early?.end({ error });
      throw error;
    },
  );
  // Awaited inside the session; a session that fails to open leaves it unread.
  listing.catch(() => undefined);
  return withSession(args, ctx, async (session) => {
    early?.attach(session.sandbox);
    let manifest: Manifest;
    try {
      manifest = await listing;
    } catch (err) {
      // The archive stops with the listing's error; its tar is gone before the run fails.
      await early?.archive?.sent.catch(() => undefined);
      throw err;
    }
    return provisionIn(session, args, ctx, {
      manifest,
      early: early?.archive,
      runCommands: true,
    });
  });
}

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
