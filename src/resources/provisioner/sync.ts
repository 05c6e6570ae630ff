/**
 * Puts a manifest's files into the sandbox: directories first, then files
 * with bounded concurrency. Many small files of one user travel as one tar
 * archive extracted in the sandbox (see `archive.ts`); fewer go many per
 * multipart request. Files larger than the part size (when one is set) are
 * split into ranges uploaded in parallel and joined with `/files/compose`;
 * otherwise a large file goes up as one stream. Modes are applied in one
 * batch per mode at the end.
 *
 * @module
 */
import { shellWord } from "../../wire/shell-word";
import * as posix from "node:path/posix";
import { commandResultOf, isMultipartSafePath, type SandboxClient } from "../../client/sandbox";
import { mapLimit } from "../core/limit";
import { ARCHIVE_MAX_FILE_BYTES, ARCHIVE_MIN_FILES, isArchivable, uploadArchive } from "./archive";
import type { DeferredHashes } from "./deferred-hashes";
import type { StartedArchive } from "./early-archive";
import type { ManifestDir, ManifestEntry } from "./manifest-entry";

/** Tunables of a sync. */
export interface SyncOptions {
  /** Uploads in flight at once. */
  concurrency: number;
  /** Files above this many bytes are uploaded in parts; undefined: every file as one stream. */
  partSizeBytes: number | undefined;
  /**
   * From this many small files of one user on, they go up as one archive.
   * @default {@link ARCHIVE_MIN_FILES}
   */
  archiveMinFiles?: number | undefined;
  log: (line: string) => void;
  signal?: AbortSignal | undefined;
  /** Hashes of a first upload still to come: an archive hashes what it packs, other paths hash first. */
  deferred?: DeferredHashes | undefined;
}

/** The shell's exit code for a command it cannot find. */
const SHELL_NOT_FOUND = 127;
/** Paths per chmod or mkdir invocation, well under the argument-length limit. */
const CHMOD_BATCH = 200;
/**
 * Small files go up many per multipart request, up to this many files and
 * bytes: enough to amortise a request's round trip, small enough that
 * `concurrency` requests keep the sandbox side busy in parallel.
 */
const BATCH_MAX_FILES = 256;
const BATCH_MAX_BYTES = 8 * 1024 * 1024;

/** One request of a sync. */
type UploadUnit =
  /** A whole file, or a byte range (inclusive) of one to be composed later. */
  | {
      kind: "file";
      entry: ManifestEntry;
      remotePath: string;
      range?: { start: number; end: number };
    }
  /** Small files of one user in one multipart request. */
  | { kind: "batch"; user: string | undefined; entries: ManifestEntry[]; bytes: number }
  /** Many small files of one user in one archive. */
  | { kind: "archive"; user: string | undefined; entries: ManifestEntry[] };

/**
 * Splits the files into requests: large files into parts, small ones into
 * batches per user. Parts come first so the longest transfers start earliest.
 */
function planUploads(
  files: readonly ManifestEntry[],
  partSizeBytes: number | undefined,
  archiveMinFiles: number,
): { units: UploadUnit[]; composed: Map<ManifestEntry, string[]> } {
  // Small files per user: an archive when there are enough of them.
  const small = new Map<string, ManifestEntry[]>();
  for (const entry of files) {
    if (entry.size > ARCHIVE_MAX_FILE_BYTES || !isArchivable(entry.remotePath)) continue;
    const key = entry.user ?? "";
    const list = small.get(key) ?? [];
    list.push(entry);
    small.set(key, list);
  }
  const archives: UploadUnit[] = [];
  const archived = new Set<ManifestEntry>();
  for (const entries of small.values()) {
    if (entries.length < archiveMinFiles) continue;
    // One stream: the sandbox extracts while it is packed and sent, so
    // splitting it would only add extractions to start.
    archives.push({ kind: "archive", user: entries[0].user, entries });
    for (const e of entries) archived.add(e);
  }
  const parts: UploadUnit[] = [];
  const singles: UploadUnit[] = [];
  const batches: Array<UploadUnit & { kind: "batch" }> = [];
  const open = new Map<string, UploadUnit & { kind: "batch" }>();
  const composed = new Map<ManifestEntry, string[]>();
  for (const entry of files) {
    if (archived.has(entry)) continue;
    if (partSizeBytes !== undefined && entry.size > partSizeBytes) {
      const names: string[] = [];
      for (let start = 0, i = 0; start < entry.size; start += partSizeBytes, i++) {
        const remotePath = `${entry.remotePath}.sandbox-iac-part-${i}`;
        names.push(remotePath);
        parts.push({
          kind: "file",
          entry,
          remotePath,
          range: { start, end: Math.min(entry.size, start + partSizeBytes) - 1 },
        });
      }
      composed.set(entry, names);
      continue;
    }
    if (entry.size >= BATCH_MAX_BYTES || !isMultipartSafePath(entry.remotePath)) {
      singles.push({ kind: "file", entry, remotePath: entry.remotePath });
      continue;
    }
    const key = entry.user ?? "";
    let batch = open.get(key);
    if (
      !batch ||
      batch.entries.length >= BATCH_MAX_FILES ||
      batch.bytes + entry.size > BATCH_MAX_BYTES
    ) {
      batch = { kind: "batch", user: entry.user, entries: [], bytes: 0 };
      open.set(key, batch);
      batches.push(batch);
    }
    batch.entries.push(entry);
    batch.bytes += entry.size;
  }
  return { units: [...parts, ...singles, ...archives, ...batches], composed };
}

/** Sends one unit; returns the bytes it carried. */
async function upload(
  sandbox: SandboxClient,
  unit: UploadUnit,
  options: SyncOptions,
): Promise<number> {
  const signal = options.signal;
  if (unit.kind === "archive") {
    return withoutTarFallback(sandbox, unit.entries, options, () =>
      uploadArchive(sandbox, unit.user, unit.entries, signal, options.deferred),
    );
  }
  if (unit.kind === "batch") {
    options.deferred?.settle(unit.entries);
    await sandbox.uploadFiles(
      unit.entries.map((e) => ({ localPath: e.localPath, remotePath: e.remotePath })),
      { user: unit.user, signal },
    );
    return unit.bytes;
  }
  options.deferred?.settle([unit.entry]);
  await sandbox.uploadFile(unit.entry.localPath, unit.remotePath, {
    user: unit.entry.user,
    signal,
    range: unit.range,
  });
  return unit.range ? unit.range.end - unit.range.start + 1 : unit.entry.size;
}

/**
 * The bytes `archive` sent; on a template without tar, its files sent the
 * slower way instead.
 */
async function withoutTarFallback(
  sandbox: SandboxClient,
  entries: Iterable<ManifestEntry>,
  options: SyncOptions,
  archive: () => Promise<number>,
): Promise<number> {
  try {
    return await archive();
  } catch (err) {
    if (commandResultOf(err)?.exitCode !== SHELL_NOT_FOUND) throw err;
    const files = [...entries];
    options.log(
      `tar is not available in sandbox ${sandbox.sandboxID}: sending ${files.length} files in multipart batches`,
    );
    const { units } = planUploads(files, undefined, Number.POSITIVE_INFINITY);
    const sent = await mapLimit(units, options.concurrency, (u) => upload(sandbox, u, options));
    return sent.reduce((a, b) => a + b, 0);
  }
}

/** The directories that no file of `files` (uploaded as the same user) lies under. */
function dirsWithoutUploads(
  dirs: readonly ManifestDir[],
  files: readonly ManifestEntry[],
): ManifestDir[] {
  const covered = new Set<string>();
  // Files come listed directory by directory: one whose raw parent and user
  // are the last file's, and whose name is a plain one, covers the same
  // directories, so the normalising and the walk up are skipped for it.
  let lastParent: string | undefined;
  let lastUser: string | undefined;
  for (const file of files) {
    const user = file.user ?? "";
    const slash = file.remotePath.lastIndexOf("/");
    const parent = file.remotePath.slice(0, slash + 1);
    const name = file.remotePath.slice(slash + 1);
    const plain = name !== "" && name !== "." && name !== "..";
    if (plain && parent === lastParent && user === lastUser) continue;
    lastParent = plain ? parent : undefined;
    lastUser = user;
    for (let dir = posix.dirname(posix.normalize(file.remotePath)); ; dir = posix.dirname(dir)) {
      const key = `${user}\0${dir}`;
      if (covered.has(key)) break;
      covered.add(key);
      if (dir === posix.dirname(dir)) break;
    }
  }
  return dirs.filter((d) => !covered.has(`${d.user ?? ""}\0${posix.normalize(d.remotePath)}`));
}

/**
 * Creates directories: one `mkdir -p` per user and batch of paths, run as
 * that user in its home (where relative paths start), so every directory and
 * missing parent is owned by its declared user and made in the listed order,
 * parents first; existing ones are left as they are. Modes come after.
 */
async function makeDirs(
  sandbox: SandboxClient,
  dirs: readonly ManifestDir[],
  options: SyncOptions,
): Promise<void> {
  const byUser = new Map<string, { user: string | undefined; paths: string[] }>();
  for (const dir of dirs) {
    const key = dir.user ?? "";
    const group = byUser.get(key) ?? { user: dir.user, paths: [] };
    group.paths.push(dir.remotePath);
    byUser.set(key, group);
  }
  for (const group of byUser.values()) {
    for (let i = 0; i < group.paths.length; i += CHMOD_BATCH) {
      const batch = group.paths.slice(i, i + CHMOD_BATCH);
      await sandbox.run(`cd && umask 022 && mkdir -p -- ${batch.map(shellWord).join(" ")}`, {
        user: group.user,
        signal: options.signal,
      });
    }
  }
}

/**
 * Uploads `files` and creates `dirs`; returns the number of bytes sent.
 * `present` are files already in place from an earlier run: directories they
 * lie under exist already. Files `early` carries (an archive started while
 * they were listed, `early-archive.ts`) are left to it, and waited for.
 */
export async function syncFiles(
  sandbox: SandboxClient,
  dirs: readonly ManifestDir[],
  files: readonly ManifestEntry[],
  options: SyncOptions,
  present: readonly ManifestEntry[] = [],
  early?: StartedArchive,
): Promise<number> {
  try {
    const rest = early ? files.filter((f) => !early.entries.has(f)) : files;
    // Parents first, so each directory's owner is the declared user. An upload
    // creates its missing parents the same way (0755, owned by its user), so
    // only directories no uploaded (or present) file lies under need making.
    // (An early archive's files are all of one user: the order is theirs alone.)
    const placed =
      present.length > 0 || early ? [...rest, ...present, ...(early?.entries ?? [])] : rest;
    await makeDirs(sandbox, dirsWithoutUploads(dirs, placed), options);
    const { units, composed } = planUploads(
      rest,
      options.partSizeBytes,
      options.archiveMinFiles ?? ARCHIVE_MIN_FILES,
    );
    for (const unit of units)
      if (unit.kind === "archive")
        options.log(`uploading ${unit.entries.length} files in one archive`);
    const sent = await mapLimit(units, options.concurrency, (unit) =>
      upload(sandbox, unit, options),
    );
    if (early)
      sent.push(await withoutTarFallback(sandbox, early.entries, options, () => early.sent));
    for (const [entry, parts] of composed) {
      await sandbox.compose(parts, entry.remotePath, { user: entry.user, signal: options.signal });
      options.log(`composed ${entry.remotePath} from ${parts.length} parts`);
    }
    await applyModes(sandbox, files, dirs, options);
    return sent.reduce((a, b) => a + b, 0);
  } catch (err) {
    // The early archive is not left running behind a failed sync.
    await early?.sent.catch(() => undefined);
    throw err;
  }
}

/** Sets the declared modes, one chmod per mode and batch, as the owning user. */
async function applyModes(
  sandbox: SandboxClient,
  files: readonly ManifestEntry[],
  dirs: readonly ManifestDir[],
  options: SyncOptions,
): Promise<void> {
  const groups = new Map<string, { user: string | undefined; mode: number; paths: string[] }>();
  for (const item of [...files, ...dirs]) {
    // Uploads land 0644 and directories 0755: only differing modes need a chmod.
    const isDir = !("sha256" in item);
    if (item.mode === (isDir ? 0o755 : 0o644)) continue;
    const key = `${item.user ?? ""}:${item.mode}`;
    const group = groups.get(key) ?? { user: item.user, mode: item.mode, paths: [] };
    group.paths.push(item.remotePath);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    for (let i = 0; i < group.paths.length; i += CHMOD_BATCH) {
      const batch = group.paths.slice(i, i + CHMOD_BATCH);
      await sandbox.run(`chmod ${group.mode.toString(8)} ${batch.map(shellWord).join(" ")}`, {
        user: group.user,
        signal: options.signal,
      });
    }
  }
}

/** Removes files no longer declared. */
export async function removeFiles(
  sandbox: SandboxClient,
  paths: readonly string[],
  options: SyncOptions,
): Promise<void> {
  await mapLimit(paths, options.concurrency, (p) =>
    sandbox.remove(posix.normalize(p), { signal: options.signal }),
  );
}
