/**
 * Disk figures of a sandbox: bytes in its writable layer, and the space its
 * filesystem can still give it.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import { execHost } from "./exec";

/**
 * Bytes stored in `dirs` (apparent sizes, `du -sb`), 0 for a missing dir.
 * One `du` process walks in C, far cheaper than an lstat per file from Node.
 */
export async function bytesUsed(dirs: readonly string[]): Promise<number> {
  const present: string[] = [];
  for (const d of dirs)
    if (
      await fs.access(d).then(
        () => true,
        () => false,
      )
    )
      present.push(d);
  if (present.length === 0) return 0;
  const { stdout } = await execHost("runtime.stats", "du", ["-sb", "--total", ...present]);
  const totalLine = stdout.trim().split("\n").pop() ?? "0";
  return Number(totalLine.split(/\s+/)[0]) || 0;
}

/** Bytes an unprivileged writer can still allocate on the filesystem holding `dir`. */
export async function bytesAvailable(dir: string): Promise<number> {
  const s = await fs.statfs(dir);
  return s.bavail * s.bsize;
}
