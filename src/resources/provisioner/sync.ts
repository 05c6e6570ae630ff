/**
 * Puts a manifest's files into the sandbox: directories first, then files
 * with bounded concurrency. Many small files of one user travel as one tar
 * archive extracted in the sandbox (see `archive.ts`); fewer go many per
 * multipart request. Files larger than the part size (when one is set) are
 * split into ranges uploaded in parallel and joined with `/files/compose`;
 * otherwise a large file goes up as one stream. Modes are applied in one
 * batch per mode at the end.
 *
 * This file sends: how the files are cut into requests is `upload-plan.ts`,
 * the `mkdir` and `chmod` commands for directories and modes
 * `dirs-and-modes.ts`.
 *
 * @module
 */
import * as posix from "node:path/posix";
import { commandResultOf, type SandboxClient } from "../../client/sandbox";
import { mapLimit } from "../core/limit";
import { ARCHIVE_MIN_FILES, uploadArchive } from "./archive";
import type { DeferredHashes } from "./deferred-hashes";
import { applyModes, dirsWithoutUploads, makeDirs } from "./dirs-and-modes";
import type { StartedArchive } from "./early-archive";
import type { ManifestDir, ManifestEntry } from "./manifest-entry";
import { planUploads, type UploadUnit } from "./upload-plan";

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
    // An early archive's tar that was given no file (early-archive.ts) leaves nothing to send.
    if (files.length === 0) return 0;
    options.log(
      `tar is not available in sandbox ${sandbox.sandboxID}: sending ${files.length} files in multipart batches`,
    );
    const { units } = planUploads(files, undefined, Number.POSITIVE_INFINITY);
    const sent = await mapLimit(units, options.concurrency, (u) => upload(sandbox, u, options));
    return sent.reduce((a, b) => a + b, 0);
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
