/**
 * Crash-safe files: every write goes to a temporary file that is fsynced and
 * then renamed over the target, and the directory is fsynced, so a `kill -9`
 * leaves either the old or the new content, never a torn one.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import type { z } from "zod";
import { SandboxIacError } from "../../errors";

/** How {@link writeFileAtomic} and {@link JsonStateWriter} write. */
export interface WriteOptions {
  /**
   * Wait for the content and the rename to reach the disk (fsync). Without it
   * the write still survives the service being killed (even `kill -9`: the
   * kernel holds the renamed file), not a power loss before the kernel's own
   * writeback; on a busy disk each fsync costs 10-150 ms. A
   * {@link JsonStateWriter} without fsync writes synchronously.
   * @default true
   */
  fsync?: boolean | undefined;
}

/** The temporary file `file` is written to before it is renamed over `file`: a new name beside it. */
function tempPathFor(file: string): string {
  return path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`,
  );
}

/** Writes `content` to `file` atomically with the given mode. */
export async function writeFileAtomic(
  file: string,
  content: string | Buffer,
  mode = 0o600,
  opts: WriteOptions = {},
): Promise<void> {
  const fsync = opts.fsync ?? true;
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const tmp = tempPathFor(file);
  const handle = await fs.open(tmp, "w", mode);
  try {
    await handle.writeFile(content);
    if (fsync) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  if (fsync) await syncDir(dir);
}

/**
 * {@link writeFileAtomic} without fsync, in system calls made at once: each
 * is a page-cache operation of microseconds, where the thread pool's open,
 * write, close and rename each wait for a turn of the event loop (on every
 * create, which writes the sandboxes' state file before answering: 1.3-2 ms
 * of the answer on an idle service, 5-30 ms on a busy one).
 */
function writeFileAtomicNow(file: string, content: string, mode: number): void {
  const tmp = tempPathFor(file);
  let fd: number;
  try {
    fd = openSync(tmp, "w", mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    mkdirSync(path.dirname(file), { recursive: true });
    fd = openSync(tmp, "w", mode);
  }
  try {
    try {
      writeFileSync(fd, content);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
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

/** Reads and parses a JSON file; `undefined` when it does not exist. */
export async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  return JSON.parse(text) as unknown;
}

/**
 * Reads a JSON file the service wrote, through `schema`, the one schema of
 * that file (kept in the module that owns it); `undefined` when the file does
 * not exist. A file that is not JSON, or whose content does not match (a
 * hand edit, a file of another version), fails with an error naming the file
 * and the first field that is wrong, before anything is built on it.
 */
export async function readStateFile<T>(file: string, schema: z.ZodType<T>): Promise<T | undefined> {
  let raw: unknown;
  try {
    raw = await readJsonFile(file);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw corruptState(file, `is not JSON (${err.message})`);
  }
  if (raw === undefined) return undefined;
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join(".") : "(the document)";
  throw corruptState(file, `has a bad field ${field}: ${issue?.message ?? "invalid"}`, field);
}

function corruptState(file: string, what: string, field?: string): SandboxIacError {
  return new SandboxIacError(
    "internal",
    `the service's state file ${file} ${what}: restore it from a backup, or move it aside to start without what it recorded`,
    { operation: "local.readState", resourceId: file, ...(field !== undefined ? { field } : {}) },
  );
}

/**
 * Serialises writes of one JSON document: callers ask for a flush whenever the
 * state changed; concurrent requests coalesce into at most one pending write
 * that always carries the latest snapshot.
 */
export class JsonStateWriter {
  private running: Promise<void> | undefined;
  private pending = false;

  constructor(
    private readonly file: string,
    private readonly snapshot: () => unknown,
    private readonly indent: number | undefined = 2,
    private readonly opts: WriteOptions = {},
  ) {}

  /** Resolves once a write that includes every change made before the call is on disk. */
  async flush(): Promise<void> {
    if (this.opts.fsync === false) {
      // Nothing to coalesce: the write is done before anything else runs.
      writeFileAtomicNow(this.file, JSON.stringify(this.snapshot(), null, this.indent), 0o600);
      return;
    }
    if (this.running) {
      this.pending = true;
      while (this.running !== undefined) await this.running;
      return;
    }
    this.running = (async () => {
      try {
        do {
          this.pending = false;
          await writeFileAtomic(
            this.file,
            JSON.stringify(this.snapshot(), null, this.indent),
            0o600,
            this.opts,
          );
        } while (this.pending);
      } finally {
        this.running = undefined;
      }
    })();
    await this.running;
  }
}
