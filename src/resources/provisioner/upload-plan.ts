/**
 * How a sync's files are cut into requests: many small files of one user
 * into one archive, fewer into multipart batches, a large file into byte
 * ranges when a part size is set, the rest one stream each. Its own file
 * because this is the plan alone (no request is sent here): `sync.ts` sends
 * it, and sends it again without archives on a template without tar.
 *
 * @module
 */
import { isMultipartSafePath } from "../../client/sandbox";
import { ARCHIVE_MAX_FILE_BYTES, isArchivable } from "./archive";
import type { ManifestEntry } from "./manifest-entry";

/**
 * Small files go up many per multipart request, up to this many files and
 * bytes: enough to amortise a request's round trip, small enough that
 * `concurrency` requests keep the sandbox side busy in parallel.
 */
const BATCH_MAX_FILES = 256;
const BATCH_MAX_BYTES = 8 * 1024 * 1024;

/** One request of a sync. */
export type UploadUnit =
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
export function planUploads(
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
