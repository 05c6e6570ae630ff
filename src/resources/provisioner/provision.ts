/**
 * One provisioning pass, apart from the lifecycle that decides when one runs:
 * list the files (`manifest.ts`), sync them into the sandbox (`sync.ts`), run
 * the commands, take the snapshot, and say what the run leaves behind (the
 * kept sandbox's outputs). A create provisions a fresh sandbox
 * (`provisionFresh`); an update of a sandbox that lives on provisions it again
 * with the previous digest to compare with (`provisionIn`). Its own file so
 * that `provisioner.lifecycle.ts` holds the resource's methods alone.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { versionedRef } from "../core/refs";
import { throwIfStopped } from "../core/stop";
import type { ResourceContext } from "../core/lifecycle";
import { runCommands } from "./commands";
import { HashCache } from "./hash-cache";
import {
  buildManifest,
  compareManifest,
  digestOf,
  type Manifest,
  type ManifestDigest,
} from "./manifest";
import type { ManifestEntry } from "./manifest-entry";
import type { ProvisionerArgs, ProvisionerOutputs } from "./provisioner.args";
import { withSession, type WorkSession } from "./session";
import { checkSources } from "./sources";
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
export async function manifestOf(
  args: ProvisionerArgs,
  baseDir: string,
  firstUpload = false,
  early?: EarlyArchive,
): Promise<Manifest> {
  // Hashes of files unchanged since the last plan or apply come from the
  // local cache, read once the tree is walked.
  return buildManifest(args.files ?? [], baseDir, {
    cache: HashCache.open(baseDir),
    deferHashes: firstUpload,
    onFile: early && ((entry, deferred) => early.add(entry, deferred)),
    onWalked: early && ((files) => early.walked(files)),
  });
}

/** The files of `files` not in `upload`. */
function unchangedOf(files: readonly ManifestEntry[], upload: readonly ManifestEntry[]) {
  const uploading = new Set(upload);
  return files.filter((f) => !uploading.has(f));
}

/** One provisioning pass in `session`: sync, run, snapshot. */
export async function provisionIn(
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
  // The digest, made once every hash is known: for a first upload, as soon
  // as its archive packed the last file, while the sandbox still extracts
  // (its last 60-90 ms for 10,000 files); the digest of 10,000 files and the
  // cache's store took 8-10 ms after the extraction before (bench/provisioner.js).
  const digest = (async () => {
    if (deferred) {
      await deferred.complete();
      // After the last file's hash, the packer still frames and writes the
      // archive's last chunk: one turn of the event loop lets it go first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await deferred.finish();
    }
    return digestOf(plan.manifest);
  })();
  // Awaited once the files are in place; a sync that fails first leaves it unread.
  digest.catch(() => undefined);
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
    fileDigest: await digest,
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
export function keptOutputs(
  keptSandboxID: string | undefined,
): Pick<ProvisionerOutputs, KeptOutput> {
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
export async function provisionFresh(
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
