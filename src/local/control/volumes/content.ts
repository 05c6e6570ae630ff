/**
 * The operations of the volume content API on one volume's directory:
 * stat, list, make a directory, update metadata, read, write and remove.
 * Every step goes through a directory descriptor held inside the volume
 * (confine.ts): nothing outside the volume is ever reached, whatever a
 * sandbox does to the tree meanwhile.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { constants as fsConstants, createReadStream } from "node:fs";
import * as fs from "node:fs/promises";
import type { Readable } from "node:stream";
import { serviceError } from "../http";
import {
  at,
  lstatAt,
  notFound,
  openAt,
  openDirInside,
  withParent,
  type ParentOf,
  type VolumePath,
} from "./confine";
import { entryStat, listTree, type VolumeEntryStat } from "./entries";
import { SANDBOX_USER_IDS } from "./owner";
import { removeTreeAt } from "./remove";

/** Owner and mode asked for a created entry. */
export interface CreateOptions {
  uid?: number | undefined;
  gid?: number | undefined;
  mode?: number | undefined;
  /** Create missing parents (and accept an existing directory for mkdir). */
  force: boolean;
}

/** The stat of `p`. */
export async function statPath(root: string, p: VolumePath): Promise<VolumeEntryStat> {
  return withParent(root, p, (parent) => statIn(p, parent));
}

/** The entries below the directory `p`, `depth` levels deep. */
export async function listDir(
  root: string,
  p: VolumePath,
  depth: number,
): Promise<VolumeEntryStat[]> {
  const dir = await openDirInside(root, p.shown, p.parts);
  if (!dir) throw notFound(p);
  try {
    return await listTree(dir, p.shown, depth);
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
  return withParent(root, p, async (parent) => {
    const name = parent.name ?? "";
    try {
      await fs.mkdir(at(parent.dir, name), opts.mode ?? 0o755);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const st = await lstatAt(parent);
      if (!st.isDirectory() || !opts.force)
        throw serviceError(
          "conflict",
          `path '${p.shown}' already exists${st.isDirectory() ? "; pass force to accept an existing directory" : " and is not a directory"}`,
        );
      return entryStat(p.shown, parent, st);
    }
    await setOwnerAndMode(parent, opts, 0o755);
    return statIn(p, parent);
  });
}

/** Changes the owner and/or mode of `p` (not of a symlink). */
export async function updateMetadata(
  root: string,
  p: VolumePath,
  change: { uid?: number | undefined; gid?: number | undefined; mode?: number | undefined },
): Promise<VolumeEntryStat> {
  return withParent(root, p, async (parent) => {
    const handle = await openEntry(p, parent, fsConstants.O_RDONLY);
    try {
      const st = await handle.stat();
      if (change.uid !== undefined || change.gid !== undefined)
        await handle.chown(change.uid ?? st.uid, change.gid ?? st.gid);
      if (change.mode !== undefined) await handle.chmod(change.mode);
    } finally {
      await handle.close();
    }
    return statIn(p, parent);
  });
}

/** Opens the file `p` for reading: its size and a stream of its bytes. */
export async function openForRead(
  root: string,
  p: VolumePath,
): Promise<{ size: number; stream: Readable }> {
  const handle = await withParent(root, p, (parent) => openEntry(p, parent, fsConstants.O_RDONLY));
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
  return withParent(root, p, async (parent) => {
    const name = parent.name ?? "";
    const existing = await lstatAt(parent).catch(() => undefined);
    if (existing?.isDirectory())
      throw serviceError("invalid_argument", `path '${p.shown}' is a directory, not a file`);
    const tmp = `.${name.slice(0, 200)}.${randomBytes(6).toString("hex")}.upload`;
    // O_EXCL: never opens an existing entry (nor follows a symlink) of that name.
    const handle = await fs.open(at(parent.dir, tmp), "wx", 0o600);
    try {
      // One chunk at a time: the upload is never held in memory whole.
      for await (const chunk of body as AsyncIterable<Buffer>) await handle.write(chunk);
      await handle.chown(opts.uid ?? SANDBOX_USER_IDS.uid, opts.gid ?? SANDBOX_USER_IDS.gid);
      await handle.chmod(opts.mode ?? 0o644);
      await handle.sync();
      await handle.close();
      await fs.rename(at(parent.dir, tmp), at(parent.dir, name));
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fs.unlink(at(parent.dir, tmp)).catch(() => undefined);
      if ((err as NodeJS.ErrnoException).code === "ENOSPC")
        throw serviceError("rate_limited", `the volume is out of space writing '${p.shown}'`, {
          status: 507,
        });
      throw err;
    }
    return statIn(p, parent);
  });
}

/** Removes `p` (a directory with everything below it). */
export async function removePath(root: string, p: VolumePath): Promise<void> {
  if (p.parts.length === 0)
    throw serviceError(
      "invalid_argument",
      "path '/' is the volume root: delete the volume instead",
    );
  await withParent(root, p, async (parent) => {
    await lstatAt(parent).catch((err: unknown) => {
      throw (err as NodeJS.ErrnoException).code === "ENOENT" ? notFound(p) : err;
    });
    await removeTreeAt(parent.dir, parent.name ?? "");
  });
}

/** The stat view of `p`, whose held parent is `parent`; 404 when it is missing. */
async function statIn(p: VolumePath, parent: ParentOf): Promise<VolumeEntryStat> {
  try {
    return await entryStat(p.shown, parent, await lstatAt(parent));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw notFound(p);
    throw err;
  }
}

/** Opens the entry `p` (the root itself for `/`) with `flags`, refusing a symlink. */
async function openEntry(p: VolumePath, parent: ParentOf, flags: number): Promise<fs.FileHandle> {
  // The root: a second descriptor of the held directory (the magic link itself is followed).
  if (parent.name === undefined) return fs.open(at(parent.dir), fsConstants.O_RDONLY);
  try {
    return await openAt(parent.dir, parent.name, flags);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw notFound(p);
    if (code === "ELOOP")
      throw serviceError(
        "invalid_argument",
        `path ${JSON.stringify(p.shown)} is a symlink: the content API does not follow symlinks`,
      );
    throw err;
  }
}

/** Creates missing parents of `p` when `force` is set; 404 otherwise. */
async function ensureParents(root: string, p: VolumePath, opts: CreateOptions): Promise<void> {
  const parents = p.parts.slice(0, -1);
  const held = await openDirInside(root, p.shown, parents);
  if (held) {
    await held.close();
    return;
  }
  if (!opts.force)
    throw serviceError(
      "not_found",
      `the parent directory of '${p.shown}' does not exist; create it first or pass force`,
    );
  for (let i = 1; i <= parents.length; i++) {
    const sub: VolumePath = {
      parts: parents.slice(0, i),
      shown: `/${parents.slice(0, i).join("/")}`,
    };
    await withParent(root, sub, async (parent) => {
      try {
        await fs.mkdir(at(parent.dir, parent.name ?? ""), 0o755);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
        throw err;
      }
      await setOwnerAndMode(parent, { ...opts, mode: undefined }, 0o755);
    });
  }
}

/** Gives the entry just made in `parent` its owner and mode, through a descriptor. */
async function setOwnerAndMode(
  parent: ParentOf,
  opts: CreateOptions,
  defaultMode: number,
): Promise<void> {
  const handle = await openAt(parent.dir, parent.name ?? "", fsConstants.O_RDONLY);
  try {
    await handle.chown(opts.uid ?? SANDBOX_USER_IDS.uid, opts.gid ?? SANDBOX_USER_IDS.gid);
    await handle.chmod(opts.mode ?? defaultMode);
  } finally {
    await handle.close();
  }
}
