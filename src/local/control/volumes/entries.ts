/**
 * `VolumeEntryStat` views of volume entries, and directory listings with a
 * depth, walked through held directory descriptors (see confine.ts), never
 * following symlinks.
 *
 * @module
 */
import type { Stats } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { at, openDirAt, type ParentOf } from "./confine";

/** The wire `VolumeEntryStat`. */
export interface VolumeEntryStat {
  name: string;
  type: "unknown" | "file" | "directory" | "symlink";
  path: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  atime: string;
  mtime: string;
  ctime: string;
  target?: string;
}

/**
 * The view of the entry at `shown` (volume path), whose stat is `st`; the
 * target of a symlink is read through its held parent.
 */
export async function entryStat(
  shown: string,
  parent: ParentOf,
  st: Stats,
): Promise<VolumeEntryStat> {
  const type = st.isSymbolicLink()
    ? "symlink"
    : st.isDirectory()
      ? "directory"
      : st.isFile()
        ? "file"
        : "unknown";
  const view: VolumeEntryStat = {
    name: shown === "/" ? "/" : path.posix.basename(shown),
    type,
    path: shown,
    size: st.size,
    mode: st.mode & 0o7777,
    uid: st.uid,
    gid: st.gid,
    atime: st.atime.toISOString(),
    mtime: st.mtime.toISOString(),
    ctime: st.ctime.toISOString(),
  };
  if (type === "symlink" && parent.name !== undefined)
    view.target = await fs.readlink(at(parent.dir, parent.name)).catch(() => "");
  return view;
}

/**
 * Lists the held directory `dir` (shown as `shown`) down to `depth` levels,
 * symlinks reported but never followed: each subdirectory is opened
 * `O_NOFOLLOW` relative to its held parent. Entries vanishing or swapped
 * meanwhile are skipped.
 */
export async function listTree(
  dir: fs.FileHandle,
  shown: string,
  depth: number,
): Promise<VolumeEntryStat[]> {
  const out: VolumeEntryStat[] = [];
  let names: string[];
  try {
    names = (await fs.readdir(at(dir))).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const childShown = shown === "/" ? `/${name}` : `${shown}/${name}`;
    let st: Stats;
    try {
      st = await fs.lstat(at(dir, name));
    } catch {
      continue;
    }
    out.push(await entryStat(childShown, { dir, name }, st));
    if (depth <= 1 || !st.isDirectory()) continue;
    // Swapped for a symlink (ELOOP) or removed since the lstat: nothing to descend into.
    const child = await openDirAt(dir, name).catch(() => undefined);
    if (!child) continue;
    try {
      out.push(...(await listTree(child, childShown, depth - 1)));
    } finally {
      await child.close();
    }
  }
  return out;
}
