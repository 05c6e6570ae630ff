/**
 * The local side of a file sync: which files the Provisioner's `files` inputs
 * name, where each goes in the sandbox, and its content hash and mode. The
 * manifest is stored in the outputs, so an update uploads only what changed.
 * Hashes of files unchanged since the last run come from a local cache keyed
 * like git's index (see `hash-cache.ts`), so a no-op costs a stat per file.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { promises as fs, statSync, type BigIntStats } from "node:fs";
import * as path from "node:path";
import * as posix from "node:path/posix";
import { SandboxIacError } from "../../errors";
import { mapLimit } from "../core/limit";
import { HashCache } from "./hash-cache";
import type { FileSpec } from "./provisioner.args";

/** One file to have in the sandbox. */
export interface ManifestEntry {
  /** Absolute local path. */
  localPath: string;
  /** Absolute or home-relative path in the sandbox. */
  remotePath: string;
  /** Bytes. */
  size: number;
  /** Permission bits, e.g. 0o644. */
  mode: number;
  /** Hex SHA-256 of the content. */
  sha256: string;
  /** Owner in the sandbox; undefined means the default user. */
  user?: string | undefined;
}

/** Directory entries to create even when empty. */
export interface ManifestDir {
  remotePath: string;
  mode: number;
  user?: string | undefined;
}

/** Everything the `files` inputs resolve to. */
export interface Manifest {
  files: ManifestEntry[];
  dirs: ManifestDir[];
}

/** What is stored in outputs per remote path: enough to tell a change. */
export type ManifestDigest = Record<string, { sha256: string; mode: number; size: number }>;

/** Files hashed at once: the Provisioner's default upload concurrency. */
const HASH_CONCURRENCY = 8;
/**
 * Files up to this size are read with one `read` into a buffer of their size;
 * larger ones are streamed in chunks of this size. A stream per small file
 * would allocate a whole chunk per file, which dominates hashing a tree of
 * small files.
 */
const READ_CHUNK_BYTES = 1 << 20;

/**
 * Opens `file` once and returns its content hash with the size and mode of
 * the very file hashed (fstat of the open descriptor: no separate stat, and
 * no race between the stat and the read).
 */
async function hashAndStat(
  file: string,
): Promise<{ sha256: string; size: number; mode: number; isFile: boolean; stat: BigIntStats }> {
  const handle = await fs.open(file, "r");
  try {
    const stat = await handle.stat({ bigint: true });
    const mode = Number(stat.mode) & 0o7777;
    if (!stat.isFile()) return { sha256: "", size: Number(stat.size), mode, isFile: false, stat };
    const hash = createHash("sha256");
    const buffer = Buffer.allocUnsafe(Math.min(Math.max(Number(stat.size), 1), READ_CHUNK_BYTES));
    let size = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
    return { sha256: hash.digest("hex"), size, mode, isFile: true, stat };
  } finally {
    await handle.close();
  }
}

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
  const local = path.resolve(root, spec.source);
  let stat;
  try {
    stat = await fs.stat(local);
  } catch (cause) {
    throw missingSource(spec, local, cause);
  }
  if (stat.isFile()) {
    out.push({ localPath: local, remotePath: spec.destination, user: spec.user });
    return;
  }
  if (!stat.isDirectory()) {
    throw new SandboxIacError(
      "invalid_argument",
      `files source ${JSON.stringify(spec.source)} is neither a file nor a directory: name a regular file or a directory`,
      { operation: "provisioner.files", field: "files.source", resourceId: spec.source },
    );
  }
  dirs.push({ remotePath: spec.destination, mode: stat.mode & 0o7777, user: spec.user });
  const stack: Array<{ local: string; remote: string }> = [{ local, remote: spec.destination }];
  while (stack.length > 0) {
    const { local: dir, remote } = stack.pop()!;
    const entries = await fs.readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const childLocal = path.join(dir, entry.name);
      const childRemote = posix.join(remote, entry.name);
      if (entry.isFile()) {
        out.push({ localPath: childLocal, remotePath: childRemote, user: spec.user });
        continue;
      }
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      // Directories need their mode; a symlink needs a stat to tell what it points at.
      const st = await fs.stat(childLocal);
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
  /** @default no cache: every file is hashed */
  cache?: HashCache | undefined;
}

/**
 * The hash, size and mode of `file` from the cache when its stat key matches
 * (no read), else by reading it and recording the result.
 */
async function cachedHashAndStat(
  file: string,
  cache: HashCache,
): Promise<{ sha256: string; size: number; mode: number; isFile: boolean }> {
  let st: BigIntStats | undefined;
  try {
    // Synchronous: a stat is a few microseconds, far less than a trip through the thread pool.
    st = statSync(file, { bigint: true });
  } catch {
    // Reported by the hashing pass below with the file's name.
  }
  if (st?.isFile()) {
    const sha256 = cache.lookup(file, st);
    if (sha256 !== undefined)
      return { sha256, size: Number(st.size), mode: Number(st.mode) & 0o7777, isFile: true };
  }
  const h = await hashAndStat(file);
  if (h.isFile) cache.record(file, h.stat, h.sha256);
  return h;
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
  const cache = options.cache ?? HashCache.none();
  const hashed = await mapLimit(unique, HASH_CONCURRENCY, async (p) => {
    try {
      return await cachedHashAndStat(p.localPath, cache);
    } catch (cause) {
      throw new SandboxIacError(
        "invalid_argument",
        `cannot read ${JSON.stringify(p.localPath)} (for ${p.remotePath}): ${SandboxIacError.from(cause, { operation: "provisioner.files" }).reason}: make it readable or leave it out of files`,
        { operation: "provisioner.files", field: "files.source", resourceId: p.localPath, cause },
      );
    }
  });
  const files: ManifestEntry[] = [];
  unique.forEach((p, i) => {
    const h = hashed[i];
    // Replaced by a non-file between listing and hashing: skipped, as the listing would have.
    if (h?.isFile) files.push({ ...p, size: h.size, mode: h.mode, sha256: h.sha256 });
  });
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
  const before = previous ?? {};
  const upload = next.files.filter((f) => {
    const old = before[f.remotePath];
    return old === undefined || old.sha256 !== f.sha256 || old.mode !== f.mode;
  });
  const declared = new Set(next.files.map((f) => f.remotePath));
  const remove = Object.keys(before).filter((p) => !declared.has(p));
  return { upload, remove };
}
