/**
 * The local side of a file sync: which files the Provisioner's `files` inputs
 * name, where each goes in the sandbox, and its content hash and mode. The
 * manifest is stored in the outputs, so an update uploads only what changed.
 * Hashes of files unchanged since the last run come from a local cache keyed
 * like git's index (see `hash-cache.ts`), so a no-op costs a stat per file.
 *
 * @module
 */
import { promises as fs, readdirSync, statSync, type BigIntStats, type Stats } from "node:fs";
import * as path from "node:path";
import * as posix from "node:path/posix";
import { SandboxIacError } from "../../errors";
import { mapLimit } from "../core/limit";
import {
  hashFile,
  hashSmallFileSync,
  SYNC_HASH_MAX_BYTES,
  unreadableFile,
  type FileHash,
} from "./file-hash";
import { DeferredHashes } from "./deferred-hashes";
import { HashCache } from "./hash-cache";
import type { ManifestDir, ManifestEntry } from "./manifest-entry";
import type { FileSpec } from "./provisioner.args";

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

/** Large files hashed at once: the Provisioner's default upload concurrency. */
const HASH_CONCURRENCY = 8;
/** Directories listed between two turns of the event loop. */
const WALK_SLICE_DIRS = 32;
/** Small files hashed between two turns of the event loop. */
const HASH_SLICE_FILES = 64;
/** Files listed between two turns of the event loop, when their entries are taken as they come. */
const LIST_SLICE_FILES = 256;

interface Pending {
  localPath: string;
  remotePath: string;
  user?: string | undefined;
}

function missingSource(spec: FileSpec, local: string, cause: unknown): SandboxIacError {
  return new SandboxIacError(
    "invalid_argument",
    `files source ${JSON.stringify(spec.source)} does not exist (resolved to ${local}): fix the path or create the file`,
    { operation: "provisioner.files", field: "files.source", resourceId: spec.source, cause },
  );
}

/** The stat of a spec's source, which must be a regular file or a directory. */
async function sourceStat(spec: FileSpec, root: string): Promise<{ local: string; stat: Stats }> {
  const local = path.resolve(root, spec.source);
  let stat;
  try {
    stat = await fs.stat(local);
  } catch (cause) {
    throw missingSource(spec, local, cause);
  }
  if (!stat.isFile() && !stat.isDirectory()) {
    throw new SandboxIacError(
      "invalid_argument",
      `files source ${JSON.stringify(spec.source)} is neither a file nor a directory: name a regular file or a directory`,
      { operation: "provisioner.files", field: "files.source", resourceId: spec.source },
    );
  }
  return { local, stat };
}

/**
 * Fails as {@link buildManifest} would on a source that is missing or
 * neither a file nor a directory, without listing anything: a run checks
 * this before it opens a sandbox, then lists while the sandbox is opened.
 */
export async function checkSources(specs: readonly FileSpec[], root: string): Promise<void> {
  for (const spec of specs) await sourceStat(spec, root);
}

/**
 * Lists a spec's files (without stat: sizes and modes come from the hashing
 * pass) and its directories (with their modes). Symlinks are followed.
 */
async function walk(
  spec: FileSpec,
  root: string,
  out: Pending[],
  dirs: ManifestDir[],
): Promise<void> {
  const { local, stat } = await sourceStat(spec, root);
  if (stat.isFile()) {
    out.push({ localPath: local, remotePath: spec.destination, user: spec.user });
    return;
  }
  dirs.push({ remotePath: spec.destination, mode: stat.mode & 0o7777, user: spec.user });
  const stack: Array<{ local: string; remote: string }> = [{ local, remote: spec.destination }];
  let listed = 0;
  while (stack.length > 0) {
    const { local: dir, remote } = stack.pop()!;
    // Synchronous, a slice of directories between two turns of the event
    // loop: awaited one by one, each readdir and stat was a trip through the
    // thread pool, and the listing of 10,000 files in 100 directories spent
    // about 25 ms of its 120 ms waiting for them (bench/provisioner.js).
    if (++listed % WALK_SLICE_DIRS === 0) await new Promise<void>((r) => setImmediate(r));
    const entries = readdirSync(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // Children's paths by concatenation, not `join` (which normalises the
    // whole path again, twice per file): below the spec's own directory a
    // parent is already a joined path and a listed name is one plain
    // component (no slash, never "." or ".."), so the result is the same.
    const top = dir === local;
    const localPrefix = dir.endsWith(path.sep) ? dir : dir + path.sep;
    const remotePrefix = top ? "" : remote + "/";
    for (const entry of entries) {
      const childLocal = localPrefix + entry.name;
      const childRemote = top ? posix.join(remote, entry.name) : remotePrefix + entry.name;
      if (entry.isFile()) {
        out.push({ localPath: childLocal, remotePath: childRemote, user: spec.user });
        continue;
      }
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      // Directories need their mode; a symlink needs a stat to tell what it points at.
      const st = statSync(childLocal);
      if (st.isDirectory()) {
        dirs.push({ remotePath: childRemote, mode: st.mode & 0o7777, user: spec.user });
        stack.push({ local: childLocal, remote: childRemote });
      } else if (st.isFile()) {
        out.push({ localPath: childLocal, remotePath: childRemote, user: spec.user });
      }
    }
  }
}

/** Where a manifest's hashes are remembered between runs. */
export interface ManifestOptions {
  /**
   * A promise of one is awaited once the files are listed, so the cache is
   * read while the tree is walked.
   * @default no cache: every file is hashed
   */
  cache?: HashCache | Promise<HashCache> | undefined;
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
}

/** What the manifest keeps of a file's hashing. */
type Hashed = Omit<FileHash, "stat">;

/** A regular file's size and mode from `stat`, with `sha256` (empty while its hash is deferred). */
function hashedOf(stat: BigIntStats, sha256: string): Hashed {
  return { sha256, size: Number(stat.size), mode: Number(stat.mode) & 0o7777, isFile: true };
}

/**
 * The stat of `file` and, when the cache vouches for it, its hash, size and
 * mode (no read); a stat that fails is left for the hashing to report.
 */
function fromCache(
  file: string,
  cache: HashCache,
): { known?: Hashed; stat?: BigIntStats | undefined } {
  let stat: BigIntStats | undefined;
  try {
    // Synchronous: a stat is a few microseconds, far less than a trip through the thread pool.
    stat = statSync(file, { bigint: true });
  } catch {
    return {};
  }
  if (!stat.isFile()) return { stat };
  const sha256 = cache.lookup(file, stat);
  if (sha256 === undefined) return { stat };
  return { known: hashedOf(stat, sha256), stat };
}

/** The manifest's entry of a listed file. */
function entryOf(p: Pending, h: Hashed): ManifestEntry {
  // Spelled out rather than spread: this runs once per file of the tree.
  return {
    localPath: p.localPath,
    remotePath: p.remotePath,
    user: p.user,
    size: h.size,
    mode: h.mode,
    sha256: h.sha256,
  };
}

/**
 * The entries of `files` (undefined for one that is no longer a regular
 * file), in their order: hashes, sizes and modes from the cache where it
 * vouches for a file, else by reading it (small files synchronously, a
 * slice at a time; large ones streamed, a few at once) and recording the
 * result. With `deferred`, small files the cache does not vouch for are
 * left to it with their stat. `onFile` sees each entry as it is made (with
 * `deferred`, which takes its hash if still empty).
 */
async function entriesOf(
  files: readonly Pending[],
  cache: HashCache,
  deferred: DeferredHashes | undefined,
  onFile: ((entry: ManifestEntry, deferred: DeferredHashes | undefined) => void) | undefined,
): Promise<Array<ManifestEntry | undefined>> {
  const entries = new Array<ManifestEntry | undefined>(files.length);
  const large: number[] = [];
  let read = 0;
  for (let i = 0; i < files.length; i++) {
    // Whoever takes the entries as they come (an archive already under way)
    // gets a turn between slices.
    if (onFile && i > 0 && i % LIST_SLICE_FILES === 0)
      await new Promise<void>((r) => setImmediate(r));
    const p = files[i];
    const { known, stat } = fromCache(p.localPath, cache);
    let h: Hashed;
    if (known) h = known;
    else if (stat === undefined || stat.size > SYNC_HASH_MAX_BYTES) {
      large.push(i);
      continue;
    } else if (deferred && stat.isFile()) {
      const entry = entryOf(p, hashedOf(stat, ""));
      deferred.defer(entry, stat);
      entries[i] = entry;
      onFile?.(entry, deferred);
      continue;
    } else {
      let hashed: FileHash;
      try {
        hashed = hashSmallFileSync(p.localPath);
      } catch (cause) {
        throw unreadableFile(p, cause);
      }
      if (hashed.isFile) cache.record(p.localPath, hashed.stat, hashed.sha256);
      h = hashed;
      if (++read % HASH_SLICE_FILES === 0) await new Promise<void>((r) => setImmediate(r));
    }
    // Replaced by a non-file between listing and hashing: skipped, as the listing would have.
    if (!h.isFile) continue;
    const entry = entryOf(p, h);
    entries[i] = entry;
    onFile?.(entry, deferred);
  }
  await mapLimit(large, HASH_CONCURRENCY, async (i) => {
    const p = files[i];
    let h: FileHash;
    try {
      h = await hashFile(p.localPath);
    } catch (cause) {
      throw unreadableFile(p, cause);
    }
    if (!h.isFile) return;
    cache.record(p.localPath, h.stat, h.sha256);
    const entry = entryOf(p, h);
    entries[i] = entry;
    onFile?.(entry, deferred);
  });
  return entries;
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
  const byRemote = new Map<string, Pending>();
  for (const p of pending) byRemote.set(p.remotePath, p);
  const unique = [...byRemote.values()];
  const cache = (await options.cache) ?? HashCache.none();
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
