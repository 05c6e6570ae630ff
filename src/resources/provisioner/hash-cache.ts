/**
 * A local cache of content hashes keyed the way git's index is: a file whose
 * device, inode, size, mtime and ctime (in nanoseconds) are all as recorded
 * keeps its recorded hash without being read. Any difference means hashing
 * the content again. An edit that restores size and mtime (`touch -r`,
 * `utimes`) still changes ctime, which no user call can set back.
 *
 * Racily clean entries (git's term): a file written in the same clock tick
 * as the cache, or after it, could change again without its times moving, so
 * an entry whose mtime is not older than the cache file's own mtime is never
 * trusted; it is hashed again and the cache rewritten, after which it is.
 *
 * The cache is a convenience outside any state: one JSON file per base
 * directory under the user's cache directory, replaced atomically. A missing,
 * unreadable or corrupt cache is an empty one; failing to write it costs only
 * the next run's hashing. Saving prunes the entries that can never hit
 * again (a file deleted, or changed since it was recorded), so the file does
 * not grow with every file the directory ever held.
 *
 * It is read on first use, synchronously, and each entry is checked when it
 * is looked up: read asynchronously while the tree was walked (its reads
 * waited behind the walk's) and copied into a map first, it held a first
 * upload's archive back by 20-25 ms with the sandbox idle meanwhile
 * (bench/provisioner.js, the phase before the archive opens).
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  openSync,
  promises as fs,
  readFileSync,
  statSync,
  type BigIntStats,
} from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";

/**
 * A recorded hash as stored: the stat key it holds for (device, inode,
 * size, mtime ns, ctime ns: decimal strings, as bigints do not survive
 * JSON), the hash, and the file's mtime in ns. The racily-clean rule takes
 * the mtime from the stat whose key matched, which is the same; the third
 * field stays so that caches written before still load.
 */
type StoredEntry = [key: string, sha256: string, mtimeNs: string];

interface CacheFile {
  version: 1;
  entries: Record<string, StoredEntry>;
}

/** What a cache file held, its entries not yet checked, and when it was written. */
interface Loaded {
  entries: Record<string, unknown>;
  /** mtime of the cache file when loaded: entries not older than it are racy. */
  writtenNs: bigint;
}

/**
 * The entry stored for `file` in `entries` when it has the stored shape,
 * else undefined. The tuple as stored, not a copy: this runs once per file
 * of the tree, and in a fresh process (each apply is one) the copy, the
 * closure checking it and the parse of its mtime were about 11 of a
 * lookup's 30 ms of CPU per 10,000 files, the stat aside.
 */
function storedEntry(entries: Record<string, unknown>, file: string): StoredEntry | undefined {
  if (!Object.hasOwn(entries, file)) return undefined;
  const v = entries[file];
  return Array.isArray(v) &&
    v.length === 3 &&
    typeof v[0] === "string" &&
    typeof v[1] === "string" &&
    typeof v[2] === "string"
    ? (v as StoredEntry)
    : undefined;
}

/**
 * Reads the cache file `file`: nothing when there is none yet, or one we
 * cannot use (everything is then hashed).
 */
function load(file: string | undefined): Loaded {
  const empty: Loaded = { entries: {}, writtenNs: 0n };
  if (file === undefined) return empty;
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return empty;
  }
  try {
    const writtenNs = fstatSync(fd, { bigint: true }).mtimeNs;
    const parsed = JSON.parse(readFileSync(fd, "utf8")) as Partial<CacheFile> | null;
    if (parsed?.version !== 1 || !parsed.entries || typeof parsed.entries !== "object")
      return empty;
    return { entries: parsed.entries, writtenNs };
  } catch {
    return empty;
  } finally {
    closeSync(fd);
  }
}

/**
 * The directory holding the caches: `$SANDBOX_IAC_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/sandbox-iac`, else `~/.cache/sandbox-iac`.
 */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SANDBOX_IAC_CACHE_DIR) return env.SANDBOX_IAC_CACHE_DIR;
  const base = env.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  return path.join(base, "sandbox-iac");
}

function statKey(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * True when `file` still has the stat key `key`: a file gone, or changed
 * (its ctime moved, which nothing can set back), never matches again.
 */
function stillMatches(file: string, key: string): boolean {
  try {
    // Synchronous, as the manifest's own stats: a few microseconds each.
    return statKey(statSync(file, { bigint: true })) === key;
  } catch {
    return false;
  }
}

/** Hash cache of one base directory; counts what it saved and what it could not. */
export class HashCache {
  /** Lookups answered from the cache. */
  hits = 0;
  /** Lookups that had to hash. */
  misses = 0;
  private readonly recorded = new Map<string, StoredEntry>();
  private changed = false;
  private read: Loaded | undefined;

  private constructor(
    /** The cache file; undefined for a cache that is never stored. */
    readonly file: string | undefined,
  ) {}

  /** A cache that remembers nothing across runs (no cache directory). */
  static none(): HashCache {
    return new HashCache(undefined);
  }

  /**
   * The cache of `baseDir` in `cacheDir` (an empty one when there is none
   * yet), read on first use.
   */
  static open(baseDir: string, cacheDir: string = defaultCacheDir()): HashCache {
    const id = createHash("sha256").update(path.resolve(baseDir)).digest("hex").slice(0, 32);
    return new HashCache(path.join(cacheDir, "hashes", `${id}.json`));
  }

  /** The cache file's content, read on first use. */
  private get loaded(): Loaded {
    return (this.read ??= load(this.file));
  }

  /** The recorded hash of `file` if `st` matches its key and the entry is not racily clean. */
  lookup(file: string, st: BigIntStats): string | undefined {
    const { entries, writtenNs } = this.loaded;
    const entry = storedEntry(entries, file);
    // With the key matched, the file's mtime is the entry's: the stat's is
    // compared rather than the entry's decimal parsed again for each file.
    if (entry && entry[0] === statKey(st) && st.mtimeNs < writtenNs) {
      this.hits++;
      this.recorded.set(file, entry);
      return entry[1];
    }
    this.misses++;
    return undefined;
  }

  /** Records the hash of `file` as read while its stat was `st`. */
  record(file: string, st: BigIntStats, sha256: string): void {
    this.recorded.set(file, [statKey(st), sha256, String(st.mtimeNs)]);
    this.changed = true;
  }

  /**
   * Writes the cache when anything was hashed or pruned: entries of this run
   * over those loaded that still match their file (other resources of the
   * same base directory keep theirs; a deleted or changed file's entry is
   * dropped). Atomic; errors are ignored (the cache is only a shortcut).
   */
  async save(): Promise<void> {
    if (!this.file) return;
    const entries: CacheFile["entries"] = {};
    const { entries: stored } = this.loaded;
    for (const p of Object.keys(stored)) {
      if (this.recorded.has(p)) continue;
      const e = storedEntry(stored, p);
      if (e === undefined) {
        this.changed = true;
        continue;
      }
      if (stillMatches(p, e[0])) entries[p] = e;
      else this.changed = true;
    }
    if (!this.changed) return;
    for (const [p, e] of this.recorded) entries[p] = e;
    const body: CacheFile = { version: 1, entries };
    const tmp = `${this.file}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
      await fs.writeFile(tmp, JSON.stringify(body), { mode: 0o600 });
      await fs.rename(tmp, this.file);
      this.changed = false;
    } catch {
      await fs.rm(tmp, { force: true }).catch(() => undefined);
    }
  }
}
