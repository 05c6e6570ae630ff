/**
 * The manifest entries of listed files: size, mode and content hash of each,
 * from the hash cache where it vouches for a file, else by reading it (or,
 * for a first upload, left to the upload: `deferred-hashes.ts`). Its own file
 * because this is the part of a manifest that reads file contents, paced so
 * the event loop and an archive under way get their turns; what is listed is
 * `sources.ts`, the manifest that joins both is `manifest.ts`.
 *
 * @module
 */
import { statSync, type BigIntStats } from "node:fs";
import { mapLimit } from "../core/limit";
import {
  hashFile,
  hashSmallFileSync,
  SYNC_HASH_MAX_BYTES,
  unreadableFile,
  type FileHash,
} from "./file-hash";
import type { DeferredHashes } from "./deferred-hashes";
import type { HashCache } from "./hash-cache";
import type { ManifestEntry } from "./manifest-entry";
import type { Pending } from "./sources";

/** Large files hashed at once: the Provisioner's default upload concurrency. */
const HASH_CONCURRENCY = 8;
/** Small files hashed between two turns of the event loop. */
const HASH_SLICE_FILES = 64;
/** Files listed between two turns of the event loop, when their entries are taken as they come. */
const LIST_SLICE_FILES = 256;

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
export async function entriesOf(
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
