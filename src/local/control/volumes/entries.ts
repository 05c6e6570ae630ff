/**
 * `VolumeEntryStat` views of volume entries, and directory listings with a
 * depth, never following symlinks.
 *
 * @module
 */
import type { Stats } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";

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

/** The view of an entry at `shown` (volume path) whose host path is `host`. */
export async function entryStat(shown: string, host: string, st: Stats): Promise<VolumeEntryStat> {
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
  if (type === "symlink") view.target = await fs.readlink(host).catch(() => "");
  return view;
}

/**
 * Lists the directory whose host path is `dirHost` (a path through an opened
 * descriptor, see confine.ts) down to `depth` levels, symlinks reported but
 * never followed. Entries vanishing meanwhile are skipped.
 */
export async function listTree(
  dirHost: string,
  shown: string,
  depth: number,
): Promise<VolumeEntryStat[]> {
  const out: VolumeEntryStat[] = [];
  let names: string[];
  try {
    names = (await fs.readdir(dirHost)).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const host = path.join(dirHost, name);
    const childShown = shown === "/" ? `/${name}` : `${shown}/${name}`;
    let st: Stats;
    try {
      st = await fs.lstat(host);
    } catch {
      continue;
    }
    out.push(await entryStat(childShown, host, st));
    if (depth > 1 && st.isDirectory()) out.push(...(await listTree(host, childShown, depth - 1)));
  }
  return out;
}
