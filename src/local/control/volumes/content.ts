/**
 * The operations of the volume content API on one volume's directory:
 * stat, list, make a directory, update metadata, read, write and remove.
 * Every path goes through confine.ts; the last component is always handled
 * through a descriptor of its (verified) parent directory.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { constants as fsConstants, createReadStream } from "node:fs";
import * as fs from "node:fs/promises";
import type { Readable } from "node:stream";
import { serviceError } from "../http";
import {
  assertFdInside,
  isMissing,
  lstatInside,
  notFound,
  openInside,
  parentsAreDirectories,
  type VolumePath,
} from "./confine";
import { entryStat, listTree, type VolumeEntryStat } from "./entries";
import { SANDBOX_USER_IDS } from "./owner";

/** Owner and mode asked for a created entry. */
export interface CreateOptions {
  uid?: number | undefined;
  gid?: number | undefined;
  mode?: number | undefined;
  /** Create missing parents (and accept an existing directory for mkdir). */
  force: boolean;
}

const DIR_FLAGS = fsConstants.O_RDONLY | fsConstants.O_DIRECTORY;

/** The stat of `p`. */
export async function statPath(root: string, p: VolumePath): Promise<VolumeEntryStat> {
  return entryStat(p.shown, p.host, await lstatInside(root, p));
}

/** The entries below the directory `p`, `depth` levels deep. */
export async function listDir(
  root: string,
  p: VolumePath,
  depth: number,
): Promise<VolumeEntryStat[]> {
  const st = await lstatInside(root, p);
  if (st.isSymbolicLink())
    throw serviceError(
      "invalid_argument",
      `path '${p.shown}' is a symlink: the content API does not follow symlinks`,
    );
  if (!st.isDirectory())
    throw serviceError("invalid_argument", `path '${p.shown}' is not a directory`);
  const dir = await openInside(root, p, DIR_FLAGS);
  try {
    return await listTree(`/proc/self/fd/${dir.fd}`, p.shown, depth);
  } finally {
    await dir.close();
  }
}

/** Makes the directory `p` (201); 409 when it exists and `force` is off. */
export async function makeDir(
  root: string,
  p: VolumePath,
  opts: CreateOptions,
): Promise<VolumeEntryStat> {
  if (p.parts.length === 0) {
    if (opts.force) return statPath(root, p);
    throw serviceError("conflict", "path '/' exists: it is the volume root");
  }
  await ensureParents(root, p, opts);
  const created = await withParent(root, p, async (parent, name) => {
    try {
      await fs.mkdir(`${parent}/${name}`, opts.mode ?? 0o755);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      return false;
    }
  });
  if (!created) {
    const st = await lstatInside(root, p);
    if (!st.isDirectory() || !opts.force)
      throw serviceError(
        "conflict",
        `path '${p.shown}' already exists${st.isDirectory() ? "; pass force to accept an existing directory" : " and is not a directory"}`,
      );
    return entryStat(p.shown, p.host, st);
  }
  await setOwnerAndMode(root, p, opts, 0o755);
  return statPath(root, p);
}

/** Changes the owner and/or mode of `p` (not of a symlink). */
export async function updateMetadata(
  root: string,
  p: VolumePath,
  change: { uid?: number | undefined; gid?: number | undefined; mode?: number | undefined },
): Promise<VolumeEntryStat> {
  const st = await lstatInside(root, p);
  if (st.isSymbolicLink())
    throw serviceError(
      "invalid_argument",
      `path '${p.shown}' is a symlink: its metadata cannot be changed`,
    );
  const handle = await openInside(root, p, fsConstants.O_RDONLY);
  try {
    if (change.uid !== undefined || change.gid !== undefined)
      await handle.chown(change.uid ?? st.uid, change.gid ?? st.gid);
    if (change.mode !== undefined) await handle.chmod(change.mode);
  } finally {
    await handle.close();
  }
  return statPath(root, p);
}

/** Opens the file `p` for reading: its size and a stream of its bytes. */
export async function openForRead(
  root: string,
  p: VolumePath,
): Promise<{ size: number; stream: Readable }> {
  const handle = await openInside(root, p, fsConstants.O_RDONLY);
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    throw serviceError("invalid_argument", `path '${p.shown}' is not a regular file`);
  }
  return { size: st.size, stream: createReadStream("", { fd: handle, autoClose: true }) };
}

/**
 * Writes the file `p` from `body`, streamed into a temporary file beside it
 * and renamed over the target once complete: a cut-off upload never
 * replaces a file.
 */
export async function writeFile(
  root: string,
  p: VolumePath,
  body: Readable,
  opts: CreateOptions,
): Promise<VolumeEntryStat> {
  if (p.parts.length === 0)
    throw serviceError("invalid_argument", "path '/' is the volume root, not a file");
  await ensureParents(root, p, opts);
  await withParent(root, p, async (parent, name) => {
    const existing = await fs.lstat(`${parent}/${name}`).catch(() => undefined);
    if (existing?.isDirectory())
      throw serviceError("invalid_argument", `path '${p.shown}' is a directory, not a file`);
    const tmp = `${parent}/.${name}.${randomBytes(6).toString("hex")}.upload`;
    const handle = await fs.open(tmp, "wx", 0o600);
    try {
      // One chunk at a time: the upload is never held in memory whole.
      for await (const chunk of body as AsyncIterable<Buffer>) await handle.write(chunk);
      await handle.chown(opts.uid ?? SANDBOX_USER_IDS.uid, opts.gid ?? SANDBOX_USER_IDS.gid);
      await handle.chmod(opts.mode ?? 0o644);
      await handle.sync();
      await handle.close();
      await fs.rename(tmp, `${parent}/${name}`);
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fs.rm(tmp, { force: true });
      if ((err as NodeJS.ErrnoException).code === "ENOSPC")
        throw serviceError("rate_limited", `the volume is out of space writing '${p.shown}'`, {
          status: 507,
        });
      throw err;
    }
  });
  return statPath(root, p);
}

/** Removes `p` (a directory with everything below it). */
export async function removePath(root: string, p: VolumePath): Promise<void> {
  if (p.parts.length === 0)
    throw serviceError(
      "invalid_argument",
      "path '/' is the volume root: delete the volume instead",
    );
  await lstatInside(root, p);
  await withParent(root, p, (parent, name) =>
    fs.rm(`${parent}/${name}`, { recursive: true, force: false }).catch((err: unknown) => {
      if (isMissing(err)) throw notFound(p);
      throw err;
    }),
  );
}

/** Creates missing parents of `p` when `force` is set; 404 otherwise. */
async function ensureParents(root: string, p: VolumePath, opts: CreateOptions): Promise<void> {
  if (await parentsAreDirectories(root, p)) return;
  if (!opts.force)
    throw serviceError(
      "not_found",
      `the parent directory of '${p.shown}' does not exist; create it first or pass force`,
    );
  for (let i = 1; i < p.parts.length; i++) {
    const sub: VolumePath = {
      parts: p.parts.slice(0, i),
      shown: `/${p.parts.slice(0, i).join("/")}`,
      host: `${root}/${p.parts.slice(0, i).join("/")}`,
    };
    const made = await withParent(root, sub, (parent, name) =>
      fs.mkdir(`${parent}/${name}`, 0o755).then(
        () => true,
        (err: NodeJS.ErrnoException) => {
          if (err.code === "EEXIST") return false;
          throw err;
        },
      ),
    );
    if (made) await setOwnerAndMode(root, sub, { ...opts, mode: undefined }, 0o755);
  }
}

/**
 * Runs `fn` with a path to the verified parent directory of `p` (through
 * `/proc/self/fd`, so a parent swapped for a symlink meanwhile is not
 * followed) and the last component's name.
 */
async function withParent<T>(
  root: string,
  p: VolumePath,
  fn: (parent: string, name: string) => Promise<T>,
): Promise<T> {
  const parentParts = p.parts.slice(0, -1);
  const parentPath: VolumePath = {
    parts: parentParts,
    shown: `/${parentParts.join("/")}`,
    host: [root, ...parentParts].join("/"),
  };
  const dir = await openInside(root, parentPath, DIR_FLAGS);
  try {
    await assertFdInside(root, dir, parentPath);
    return await fn(`/proc/self/fd/${dir.fd}`, p.parts[p.parts.length - 1] ?? "");
  } finally {
    await dir.close().catch(() => undefined);
  }
}

async function setOwnerAndMode(
  root: string,
  p: VolumePath,
  opts: CreateOptions,
  defaultMode: number,
): Promise<void> {
  const handle = await openInside(root, p, fsConstants.O_RDONLY);
  try {
    await handle.chown(opts.uid ?? SANDBOX_USER_IDS.uid, opts.gid ?? SANDBOX_USER_IDS.gid);
    await handle.chmod(opts.mode ?? defaultMode);
  } finally {
    await handle.close();
  }
}
