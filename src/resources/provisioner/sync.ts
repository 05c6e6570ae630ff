/**
 * Puts a manifest's files into the sandbox: directories first, then files
 * with bounded concurrency; files larger than the part size are split into
 * ranges uploaded in parallel and joined with `/files/compose`. Modes are
 * applied in one batch per mode at the end.
 *
 * @module
 */
import * as posix from "node:path/posix";
import type { SandboxClient } from "../../client/sandbox";
import { mapLimit } from "../core/limit";
import type { ManifestDir, ManifestEntry } from "./manifest";

/** Tunables of a sync. */
export interface SyncOptions {
  /** Uploads in flight at once. */
  concurrency: number;
  /** Files above this many bytes are uploaded in parts. */
  partSizeBytes: number;
  log: (line: string) => void;
  signal?: AbortSignal | undefined;
}

/** Paths per chmod invocation, well under the argument-length limit. */
const CHMOD_BATCH = 200;

interface UploadUnit {
  entry: ManifestEntry;
  /** Byte range, inclusive start and end, for a part; undefined for a whole file. */
  range?: { start: number; end: number };
  remotePath: string;
}

function quote(p: string): string {
  return `'${p.replace(/'/g, `'\\''`)}'`;
}

function planUploads(files: readonly ManifestEntry[], partSizeBytes: number): { units: UploadUnit[]; composed: Map<ManifestEntry, string[]> } {
  const units: UploadUnit[] = [];
  const composed = new Map<ManifestEntry, string[]>();
  for (const entry of files) {
    if (entry.size <= partSizeBytes) {
      units.push({ entry, remotePath: entry.remotePath });
      continue;
    }
    const parts: string[] = [];
    for (let start = 0, i = 0; start < entry.size; start += partSizeBytes, i++) {
      const remotePath = `${entry.remotePath}.sandbox-iac-part-${i}`;
      parts.push(remotePath);
      units.push({ entry, remotePath, range: { start, end: Math.min(entry.size, start + partSizeBytes) - 1 } });
    }
    composed.set(entry, parts);
  }
  return { units, composed };
}

/** Uploads `files` and creates `dirs`; returns the number of bytes sent. */
export async function syncFiles(
  sandbox: SandboxClient,
  dirs: readonly ManifestDir[],
  files: readonly ManifestEntry[],
  options: SyncOptions,
): Promise<number> {
  // Parents first, so each directory's owner is the declared user.
  for (const dir of dirs) await sandbox.makeDir(dir.remotePath, { user: dir.user, signal: options.signal });
  const { units, composed } = planUploads(files, options.partSizeBytes);
  let bytes = 0;
  await mapLimit(units, options.concurrency, async (unit) => {
    await sandbox.uploadFile(unit.entry.localPath, unit.remotePath, {
      user: unit.entry.user,
      signal: options.signal,
      ...(unit.range ? { range: unit.range } : {}),
    });
    bytes += unit.range ? unit.range.end - unit.range.start + 1 : unit.entry.size;
  });
  for (const [entry, parts] of composed) {
    await sandbox.compose(parts, entry.remotePath, { user: entry.user, signal: options.signal });
    options.log(`composed ${entry.remotePath} from ${parts.length} parts`);
  }
  await applyModes(sandbox, files, dirs, options);
  return bytes;
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
      await sandbox.run(`chmod ${group.mode.toString(8)} ${batch.map(quote).join(" ")}`, {
        user: group.user,
        signal: options.signal,
      });
    }
  }
}

/** Removes files no longer declared. */
export async function removeFiles(sandbox: SandboxClient, paths: readonly string[], options: SyncOptions): Promise<void> {
  await mapLimit(paths, options.concurrency, (p) => sandbox.remove(posix.normalize(p), { signal: options.signal }));
}
