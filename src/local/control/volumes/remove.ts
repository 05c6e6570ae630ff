/**
 * Removing a tree inside a volume through held directory descriptors only
 * (see confine.ts): each level is opened `O_DIRECTORY | O_NOFOLLOW` relative
 * to its held parent and its entries are unlinked in it, so a directory a
 * sandbox swaps for a symlink mid-removal is unlinked as a symlink, never
 * followed. Node's recursive `fs.rm` resolves every child by its full path
 * string and would delete inside the symlink's target, as host root.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import type * as fs from "node:fs/promises";
import { rename, readdir, rmdir, unlink } from "node:fs/promises";
import { serviceError } from "../http";
import { at, openDirAt } from "./confine";

/**
 * Directory levels held open at once. Below that, a subdirectory is moved up
 * into the directory being removed (a rename inside the same held tree) and
 * removed from there: however deep a sandbox nests, descriptors stay bounded.
 */
const MAX_HELD = 64;

/**
 * Re-reads of a directory that got new entries while it was emptied (or of
 * the top directory after moving deep subdirectories up), for the whole
 * removal: a sandbox writing into the tree forever cannot keep it going forever.
 */
const MAX_EXTRA_ROUNDS = 10_000;

interface Removal {
  extraRounds: number;
}

/**
 * Removes the entry `name` of the held directory `parent`, with everything
 * below it. Resolves when it is gone (also when something else removed it).
 */
export async function removeTreeAt(parent: fs.FileHandle, name: string): Promise<void> {
  await removeAt({ extraRounds: 0 }, parent, name, 0, undefined);
}

async function removeAt(
  r: Removal,
  parent: fs.FileHandle,
  name: string,
  depth: number,
  top: fs.FileHandle | undefined,
): Promise<void> {
  for (;;) {
    try {
      await unlink(at(parent, name));
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EISDIR") throw err;
    }
    if (top && depth >= MAX_HELD) {
      await rename(at(parent, name), at(top, `.removing-${randomBytes(8).toString("hex")}`));
      return;
    }
    let dir: fs.FileHandle;
    try {
      dir = await openDirAt(parent, name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      // Swapped for a symlink or a file since the unlink: unlink that instead.
      if (code === "ELOOP" || code === "ENOTDIR") {
        spend(r);
        continue;
      }
      throw err;
    }
    try {
      await emptyDir(r, dir, depth + 1, top ?? dir);
    } finally {
      await dir.close();
    }
    try {
      await rmdir(at(parent, name));
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      // Filled again, or swapped for something else, meanwhile: go again.
      if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOTDIR") throw err;
      spend(r);
    }
  }
}

async function emptyDir(
  r: Removal,
  dir: fs.FileHandle,
  depth: number,
  top: fs.FileHandle,
): Promise<void> {
  for (let round = 0; ; round++) {
    const names = await readdir(at(dir));
    if (names.length === 0) return;
    if (round > 0) spend(r);
    for (const name of names) await removeAt(r, dir, name, depth, top);
  }
}

function spend(r: Removal): void {
  if (++r.extraRounds > MAX_EXTRA_ROUNDS)
    throw serviceError(
      "conflict",
      "the tree kept changing while it was removed (a sandbox mounting the volume is writing into it): stop the writer, or kill the sandbox, and delete again",
    );
}

/**
 * Removes everything inside the held directory `dir` (the directory itself
 * stays), e.g. a volume's content before its file system is unmounted.
 */
export async function removeContentOf(dir: fs.FileHandle): Promise<void> {
  await emptyDir({ extraRounds: 0 }, dir, 1, dir);
}
