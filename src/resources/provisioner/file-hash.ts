/**
 * The content hash of one local file with the stat of the very file read
 * (fstat of the open descriptor: no race between a stat and the read).
 * Small files are read with synchronous calls, large ones streamed through
 * the thread pool.
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  fstatSync,
  openSync,
  promises as fs,
  readSync,
  type BigIntStats,
} from "node:fs";
import { SandboxIacError } from "../../errors";

/** What hashing a file found. */
export interface FileHash {
  /** Hex SHA-256 of the content; empty when the path is not a regular file. */
  sha256: string;
  size: number;
  /** Permission bits. */
  mode: number;
  isFile: boolean;
  stat: BigIntStats;
}

/**
 * Files up to this size are hashed with synchronous calls, one `read` into a
 * buffer of their size; larger ones are streamed in chunks of this size. For
 * 10,000 files of 1-8 KiB the promise API's four trips through the thread
 * pool per file (open, fstat, read, close) took about four times the CPU of
 * the synchronous calls (bench/provisioner.js's cold create and no-op rows).
 */
export const SYNC_HASH_MAX_BYTES = 1 << 20;

/** Hashes a file known (from a stat just taken) to be at most {@link SYNC_HASH_MAX_BYTES}. */
export function hashSmallFileSync(file: string): FileHash {
  const fd = openSync(file, "r");
  try {
    const stat = fstatSync(fd, { bigint: true });
    const mode = Number(stat.mode) & 0o7777;
    if (!stat.isFile()) return { sha256: "", size: Number(stat.size), mode, isFile: false, stat };
    const hash = createHash("sha256");
    // One byte more than listed, so a file grown since its stat is read whole.
    const buffer = Buffer.allocUnsafe(Number(stat.size) + 1);
    let size = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
      size += n;
    }
    return { sha256: hash.digest("hex"), size, mode, isFile: true, stat };
  } finally {
    closeSync(fd);
  }
}

/** Hashes a file of any size, streaming it through the thread pool. */
export async function hashFile(file: string): Promise<FileHash> {
  const handle = await fs.open(file, "r");
  try {
    const stat = await handle.stat({ bigint: true });
    const mode = Number(stat.mode) & 0o7777;
    if (!stat.isFile()) return { sha256: "", size: Number(stat.size), mode, isFile: false, stat };
    const hash = createHash("sha256");
    const buffer = Buffer.allocUnsafe(
      Math.min(Math.max(Number(stat.size), 1), SYNC_HASH_MAX_BYTES),
    );
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

/**
 * The error of a file of `files` that could not be read (for its hash, or to
 * send it): the local path, its remote path, why, and the fix.
 */
export function unreadableFile(
  file: { localPath: string; remotePath: string },
  cause: unknown,
): SandboxIacError {
  return new SandboxIacError(
    "invalid_argument",
    `cannot read ${JSON.stringify(file.localPath)} (for ${file.remotePath}): ${SandboxIacError.from(cause, { operation: "provisioner.files" }).reason}: make it readable or leave it out of files`,
    { operation: "provisioner.files", field: "files.source", resourceId: file.localPath, cause },
  );
}
