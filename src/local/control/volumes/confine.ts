/**
 * Reaching a content-API path inside a volume without ever leaving it, by
 * construction.
 *
 * Sandboxes mounting the volume write into it while the service works on it,
 * so any component may turn into a symlink to the host at any moment. No path
 * string is therefore ever resolved from the volume's host path: the volume
 * root is opened once, and every further step is relative to a directory
 * descriptor the service holds, through `/proc/self/fd/<fd>/<name>` (the
 * kernel's magic link jumps to the held directory itself, so this is
 * `openat(fd, name)` / `unlinkat(fd, name)` without a native binding):
 * - `name` is one component, never `.`/`..` and never containing `/`;
 * - directories are opened `O_DIRECTORY | O_NOFOLLOW` (a symlink fails with
 *   `ELOOP`), files `O_NOFOLLOW`;
 * - `lstat`, `readlink`, `unlink`, `rmdir`, `mkdir` and `rename` never follow
 *   their last component.
 * A held directory stays inside the volume whatever is renamed meanwhile: a
 * sandbox sees the volume as a mount, and renames cannot cross it.
 *
 * @module
 */
import { constants as fsConstants } from "node:fs";
import * as fs from "node:fs/promises";
import type { SandboxIacError } from "../../../errors";
import { serviceError } from "../http";

/** A path inside a volume. */
export interface VolumePath {
  /** The normalised path shown to clients: `/` plus the components. */
  shown: string;
  /** The components below the volume root (empty for the root itself). */
  parts: string[];
}

/** Flags of every directory opened inside a volume. */
const DIR_FLAGS =
  fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;

/** Parses a `path` query value; 400 for a missing path, `..` or a NUL byte. */
export function parseVolumePath(raw: string | null): VolumePath {
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
  return { shown: `/${parts.join("/")}`, parts };
}

/** The path through which `name` is reached relative to the held directory `dir` (see module doc). */
export function at(dir: fs.FileHandle, name?: string): string {
  if (name === undefined) return `/proc/self/fd/${dir.fd}`;
  if (name === "" || name === "." || name === ".." || name.includes("/"))
    throw new Error(`not a single path component: ${JSON.stringify(name)}`);
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Opens a directory by its host path (a path the service owns, never one from a sandbox). */
export function openHostDir(hostPath: string): Promise<fs.FileHandle> {
  return fs.open(hostPath, DIR_FLAGS);
}

/** Opens the directory `name` of the held directory `dir`, never following a symlink. */
export function openDirAt(dir: fs.FileHandle, name: string): Promise<fs.FileHandle> {
  return fs.open(at(dir, name), DIR_FLAGS);
}

/**
 * Opens the entry `name` of `dir` with `flags | O_NOFOLLOW | O_NONBLOCK`
 * (a FIFO planted by a sandbox must not hang the open, nor a libuv thread).
 */
export function openAt(
  dir: fs.FileHandle,
  name: string,
  flags: number,
  mode?: number,
): Promise<fs.FileHandle> {
  return fs.open(at(dir, name), flags | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK, mode);
}

/**
 * Opens the directory at `parts` below the volume root `root`, one component
 * at a time. Resolves `undefined` when a component is missing; 400 when one
 * is a symlink or not a directory.
 */
export async function openDirInside(
  root: string,
  shown: string,
  parts: readonly string[],
): Promise<fs.FileHandle | undefined> {
  let dir = await openHostDir(root);
  for (const [i, part] of parts.entries()) {
    let next: fs.FileHandle;
    try {
      next = await openDirAt(dir, part);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const where = JSON.stringify(`/${parts.slice(0, i + 1).join("/")}`);
      if (code === "ENOENT") return undefined;
      // With O_DIRECTORY, a symlink fails with ENOTDIR rather than ELOOP: tell them apart for the message.
      const symlink =
        code === "ELOOP" ||
        (code === "ENOTDIR" &&
          (await fs.lstat(at(dir, part)).then(
            (st) => st.isSymbolicLink(),
            () => false,
          )));
      if (symlink)
        throw serviceError(
          "invalid_argument",
          `path ${JSON.stringify(shown)} goes through the symlink ${where}: the content API does not follow symlinks`,
        );
      if (code === "ENOTDIR")
        throw serviceError(
          "invalid_argument",
          `path ${JSON.stringify(shown)}: ${where} is not a directory`,
        );
      throw err;
    } finally {
      // On success or failure, the previous level is no longer needed.
      await dir.close();
    }
    dir = next;
  }
  return dir;
}

/** The held parent directory of `p` and `p`'s last component. */
export interface ParentOf {
  dir: fs.FileHandle;
  /** The last component of the path; `undefined` for the volume root. */
  name: string | undefined;
}

/**
 * Runs `fn` with `p`'s parent directory held open (the root itself for `/`,
 * with no name); 404 when a parent is missing. The descriptor is closed after.
 */
export async function withParent<T>(
  root: string,
  p: VolumePath,
  fn: (parent: ParentOf) => Promise<T>,
): Promise<T> {
  const name = p.parts.at(-1);
  const dir = await openDirInside(root, p.shown, p.parts.slice(0, -1));
  if (!dir) throw notFound(p);
  try {
    return await fn({ dir, name });
  } finally {
    await dir.close().catch(() => undefined);
  }
}

/** `lstat` of the entry `name` of `parent` (fstat of the held root when there is no name). */
export function lstatAt({ dir, name }: ParentOf): Promise<import("node:fs").Stats> {
  return name === undefined ? dir.stat() : fs.lstat(at(dir, name));
}

/** The 404 of a missing path, with the wording the SDK maps to VolumePathNotFoundError. */
export function notFound(p: VolumePath): SandboxIacError {
  return serviceError("not_found", `path '${p.shown}' does not exist in the volume`);
}
