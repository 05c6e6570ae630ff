/**
 * Crash-safe file writes: a state file is either the old or the new content,
 * never a torn mix, even after `kill -9` or a power cut.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { randomBytes } from "node:crypto";

/** Writes `data` to `file` atomically: temp file, fsync, rename, fsync of the folder. */
export async function writeFileAtomic(file: string, data: string | Buffer): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(6).toString("hex")}`;
  const handle = await fs.open(tmp, "w", 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await syncDir(path.dirname(file));
}

/** Makes a rename or create inside `dir` durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Serialises whole-file saves of one state file. Saves requested while a
 * write is queued share it; the content is taken when the write starts, so
 * the newest state always lands and each promise resolves once a write that
 * includes the caller's change is durable.
 */
export class CoalescingWriter {
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  constructor(
    private readonly file: string,
    private readonly serialize: () => string,
  ) {}

  /** Schedules a write of the current state. */
  save(): Promise<void> {
    if (this.queued) return this.queued;
    const write = this.chain.then(() => {
      this.queued = undefined;
      return writeFileAtomic(this.file, this.serialize());
    });
    this.queued = write;
    this.chain = write.catch(() => undefined);
    return write;
  }
}
