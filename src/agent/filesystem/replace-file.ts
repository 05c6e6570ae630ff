/**
 * Replacing a file's content so that no crash can lose it: the bytes go to a
 * temporary file in the same directory, which is renamed over the target only
 * once complete. A `kill -9` at any point leaves either the old file or the
 * new one under the user's name, never a partial one.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { SandboxUser } from "../users";
import { writeMetadata } from "../xattr";
import { makeDirsAs } from "./ownership";
import { AGENT_TEMP_PREFIX, noteReplace } from "./replaced-files";

/**
 * Prefix of the temporary files; short and fixed so that a 255-byte file name
 * still gets a valid temporary name next to it.
 */
const UPLOAD_TEMP_PREFIX = `${AGENT_TEMP_PREFIX}upload-`;

/**
 * Bytes a file write may queue: socket reads arrive in 64 KiB chunks, and a
 * deeper queue lets the write stream hand several to one `writev` call.
 */
const WRITE_QUEUE_BYTES = 1024 * 1024;

/** The most symbolic links followed before giving up, as the kernel does. */
const MAX_LINKS = 40;

/**
 * Where writing to `p` lands: writing through a symbolic link writes its
 * target (as an in-place overwrite would), so the link itself survives.
 */
async function writeTarget(p: string): Promise<string> {
  let cur = p;
  for (let i = 0; i < MAX_LINKS; i++) {
    const st = await fs.promises.lstat(cur).catch(() => undefined);
    if (!st?.isSymbolicLink()) return cur;
    cur = path.resolve(path.dirname(cur), await fs.promises.readlink(cur));
  }
  throw Object.assign(new Error(`too many symbolic links at ${p}`), { code: "ELOOP" });
}

/** What {@link replaceFile} needs. */
export interface ReplaceFileOptions {
  /** The file to create or replace. */
  dest: string;
  body: Readable;
  /** Owner of the new file and of any directory created for it. */
  user: SandboxUser;
  /** The new file's whole metadata set. @default none */
  metadata?: Record<string, string>;
}

/**
 * Streams `body` into `dest` atomically. An existing file keeps its mode; the
 * new file belongs to `user`.
 *
 * @throws the errno error of whichever step failed; the temporary file is then removed.
 */
export async function replaceFile(options: ReplaceFileOptions): Promise<void> {
  const { body, user } = options;
  const target = await writeTarget(options.dest);
  const dir = path.dirname(target);
  await makeDirsAs(dir, user);
  const old = await fs.promises.stat(target).catch(() => undefined);
  if (old?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
  const mode = old ? old.mode & 0o7777 : 0o644;
  const tmp = path.join(dir, `${UPLOAD_TEMP_PREFIX}${randomBytes(8).toString("hex")}`);
  const handle = await fs.promises.open(tmp, "wx", mode);
  try {
    // The stream closes the handle when it finishes (or fails).
    await pipeline(body, handle.createWriteStream({ highWaterMark: WRITE_QUEUE_BYTES }));
    await fs.promises.chown(tmp, user.uid, user.gid);
    // chown clears setuid/setgid bits; the kept mode must survive it.
    await fs.promises.chmod(tmp, mode);
    const meta = options.metadata ?? {};
    if (Object.keys(meta).length > 0) await writeMetadata(tmp, meta).catch(() => undefined);
    noteReplace(target, !old);
    await fs.promises.rename(tmp, target);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}
