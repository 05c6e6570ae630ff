/**
 * The local side of a file sync: which files the Provisioner's `files` inputs
 * name, where each goes in the sandbox, and its content hash and mode. The
 * manifest is stored in the outputs, so an update uploads only what changed.
 * Hashes of files unchanged since the last run come from a local cache keyed
 * like git's index (see `hash-cache.ts`), so a no-op costs a stat per file.
 *
 * This file joins the two halves and holds what is done with the result: the
 * listing of the sources is `sources.ts`, the hashing of what it lists
 * `hashed-entries.ts`; the digest stored in outputs and the comparison with
 * it are here.
 *
 * @module
 */
import { DeferredHashes } from "./deferred-hashes";
import { entriesOf } from "./hashed-entries";
import { HashCache } from "./hash-cache";
import type { ManifestDir, ManifestEntry } from "./manifest-entry";
import type { FileSpec } from "./provisioner.args";
import { walk, type Pending } from "./sources";

/** Turns of the event loop given to what `onWalked` started before the listing goes on. */
const TURNS_AFTER_WALKED = 2;

/** Everything the `files` inputs resolve to. */
export interface Manifest {
  files: ManifestEntry[];
  dirs: ManifestDir[];
  /**
   * With `deferHashes`: the files whose hashes (empty until then) come as
   * they are sent; the manifest is complete once `finish()` resolved.
   */
  deferred?: DeferredHashes | undefined;
}

/** What is stored in outputs per remote path: enough to tell a change. */
export type ManifestDigest = Record<string, { sha256: string; mode: number; size: number }>;

/** Where a manifest's hashes are remembered between runs. */
export interface ManifestOptions {
  /**
   * Read on its first lookup, once the files are listed.
   * @default no cache: every file is hashed
   */
  cache?: HashCache | undefined;
  /**
   * Leave the hashes of small files the cache does not vouch for to the
   * upload (see `deferred-hashes.ts`), for a run with nothing to compare
   * them with. The cache is then stored by `deferred.finish()`.
   * @default false
   */
  deferHashes?: boolean | undefined;
  /**
   * Sees each file's entry as soon as it is made (a deferred hash still
   * empty), before the whole manifest is: a first upload starts sending
   * while the rest is listed (`early-archive.ts`).
   */
  onFile?: ((entry: ManifestEntry, deferred: DeferredHashes | undefined) => void) | undefined;
  /**
   * Sees how many files the sources hold once they are walked, before any
   * is looked at (a first upload starts its `tar` in the sandbox meanwhile).
   */
  onWalked?: ((files: number) => void) | undefined;
}

/**
 * Resolves `files` inputs (relative to `root`) into a manifest with content
 * hashes. A later entry for the same remote path wins, as a later copy would.
 * Each file hashed is opened once: size, mode and hash come from that one
 * open; a file the cache vouches for is not opened at all.
 */
export async function buildManifest(
  specs: readonly FileSpec[],
  root: string,
  options: ManifestOptions = {},
): Promise<Manifest> {
  const pending: Pending[] = [];
  const dirs: ManifestDir[] = [];
  for (const spec of specs) await walk(spec, root, pending, dirs);
  if (options.onWalked) {
    options.onWalked(pending.length);
    // What it started (a request to the sandbox) goes out once its
    // connection is open, a turn of the event loop or two later: the
    // synchronous work below (the cache's read, 10,000 stats) held it back
    // by 10-15 ms otherwise (bench/provisioner.js).
    for (let turn = 0; turn < TURNS_AFTER_WALKED; turn++)
      await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const byRemote = new Map<string, Pending>();
  for (const p of pending) byRemote.set(p.remotePath, p);
  const unique = [...byRemote.values()];
  const cache = options.cache ?? HashCache.none();
  const deferred = options.deferHashes ? new DeferredHashes(cache) : undefined;
  const entries = await entriesOf(unique, cache, deferred, options.onFile);
  const files: ManifestEntry[] = [];
  for (const entry of entries) if (entry !== undefined) files.push(entry);
  if (deferred) return { files, dirs, deferred };
  await cache.save();
  return { files, dirs };
}

/** The part of a manifest stored in outputs. */
export function digestOf(manifest: Manifest): ManifestDigest {
  const digest: ManifestDigest = {};
  for (const f of manifest.files)
    digest[f.remotePath] = { sha256: f.sha256, mode: f.mode, size: f.size };
  return digest;
}

/** What an update must do to go from `previous` to `next`. */
export interface ManifestChanges {
  /** Files new or changed in content or mode. */
  upload: ManifestEntry[];
  /** Remote paths no longer declared. */
  remove: string[];
}

/** Compares a stored digest with a fresh manifest. */
export function compareManifest(
  previous: ManifestDigest | undefined,
  next: Manifest,
): ManifestChanges {
  // Nothing stored (a first upload): every file goes, none is removed.
  if (previous === undefined) return { upload: [...next.files], remove: [] };
  const upload = next.files.filter((f) => {
    const old = previous[f.remotePath];
    return old === undefined || old.sha256 !== f.sha256 || old.mode !== f.mode;
  });
  const declared = new Set(next.files.map((f) => f.remotePath));
  const remove = Object.keys(previous).filter((p) => !declared.has(p));
  return { upload, remove };
}
