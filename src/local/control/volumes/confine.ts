/**
 * Resolving a content-API path inside a volume without ever leaving it.
 *
 * Sandboxes mounting the volume write into it, so its content is an
 * attacker's: any component may be a symlink pointing anywhere on the host.
 * Paths with `..` are refused, every existing component is checked with
 * `lstat` (a symlink on the way is refused), and files are opened with
 * `O_NOFOLLOW` and checked again through `/proc/self/fd` after opening, which
 * closes the window between the check and the open.
 *
 * @module
 */
import { constants as fsConstants } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import type { SandboxIacError } from "../../../errors";
import { serviceError } from "../http";

/** A path inside a volume. */
export interface VolumePath {
  /** The normalised path shown to clients: `/` plus the components. */
  shown: string;
  /** The components below the volume root (empty for the root itself). */
  parts: string[];
  /** The absolute host path. */
  host: string;
}

/** Parses a `path` query value; 400 for a missing path, `..` or a NUL byte. */
export function parseVolumePath(root: string, raw: string | null): VolumePath {
  if (raw === null || raw === "")
    throw serviceError(
      "invalid_argument",
      "query.path: required: pass the path inside the volume, e.g. /data",
    );
  if (raw.includes("\0"))
    throw serviceError("invalid_argument", "query.path: must not contain a NUL byte");
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes(".."))
    throw serviceError(
      "invalid_argument",
      `query.path: ${JSON.stringify(raw.slice(0, 200))} contains '..': paths must stay inside the volume; pass a path from the volume root`,
    );
  return { shown: `/${parts.join("/")}`, parts, host: path.join(root, ...parts) };
}

/**
 * Checks that every existing parent of `p` is a real directory (not a
 * symlink). Resolves `false` when a parent is missing.
 */
export async function parentsAreDirectories(root: string, p: VolumePath): Promise<boolean> {
  let cur = root;
  for (const part of p.parts.slice(0, -1)) {
    cur = path.join(cur, part);
    let st;
    try {
      st = await fs.lstat(cur);
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
    if (st.isSymbolicLink())
      throw serviceError(
        "invalid_argument",
        `path ${JSON.stringify(p.shown)} goes through the symlink ${JSON.stringify(shownOf(root, cur))}: the content API does not follow symlinks`,
      );
    if (!st.isDirectory())
      throw serviceError(
        "invalid_argument",
        `path ${JSON.stringify(p.shown)}: ${JSON.stringify(shownOf(root, cur))} is not a directory`,
      );
  }
  return true;
}

/** `lstat` of `p` after checking its parents; 404 when it does not exist. */
export async function lstatInside(root: string, p: VolumePath): Promise<import("node:fs").Stats> {
  if (!(await parentsAreDirectories(root, p))) throw notFound(p);
  try {
    return await fs.lstat(p.host);
  } catch (err) {
    if (isMissing(err)) throw notFound(p);
    throw err;
  }
}

/**
 * Opens `p` with `flags | O_NOFOLLOW` and verifies through `/proc/self/fd`
 * that the opened file is inside `root`.
 */
export async function openInside(
  root: string,
  p: VolumePath,
  flags: number,
  mode?: number,
): Promise<fs.FileHandle> {
  if (!(await parentsAreDirectories(root, p))) throw notFound(p);
  let handle: fs.FileHandle;
  try {
    // O_NONBLOCK: a FIFO planted by a sandbox must not hang the open (and a libuv thread).
    handle = await fs.open(p.host, flags | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw notFound(p);
    if (code === "ELOOP")
      throw serviceError(
        "invalid_argument",
        `path ${JSON.stringify(p.shown)} is a symlink: the content API does not follow symlinks`,
      );
    if (code === "EISDIR")
      throw serviceError(
        "invalid_argument",
        `path ${JSON.stringify(p.shown)} is a directory, not a file`,
      );
    throw err;
  }
  await assertFdInside(root, handle, p);
  return handle;
}

/** Throws a 400 (and closes the handle) unless the open file lives under `root`. */
export async function assertFdInside(
  root: string,
  handle: fs.FileHandle,
  p: VolumePath,
): Promise<void> {
  const real = await fs.readlink(`/proc/self/fd/${handle.fd}`);
  if (real !== root && !real.startsWith(`${root}/`)) {
    await handle.close();
    throw serviceError(
      "invalid_argument",
      `path ${JSON.stringify(p.shown)} resolves outside the volume: the content API does not follow symlinks`,
    );
  }
}

/** The 404 of a missing path, with the wording the SDK maps to VolumePathNotFoundError. */
export function notFound(p: VolumePath): SandboxIacError {
  return serviceError("not_found", `path '${p.shown}' does not exist in the volume`);
}

/** Whether `err` is a missing-file error. */
export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function shownOf(root: string, host: string): string {
  return `/${path.relative(root, host)}`;
}
