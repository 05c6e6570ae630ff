/**
 * A manifest entry's remote path in normal form, as `posix.normalize` gives
 * it. Its own file because the archive needs it twice per file of the tree:
 * which files it takes (`archive.ts`) and its members' names
 * (`archive-pack.ts`).
 *
 * @module
 */
import * as posix from "node:path/posix";

/** An empty component (`//`), or a `.` or `..` one: what `posix.normalize` changes. */
const NOT_NORMAL = /\/\/|(?:^|\/)\.\.?(?:\/|$)/;

/**
 * `posix.normalize(remotePath)`, without normalising a path that is normal
 * already (the listing joins them so: `sources.ts`), which is nearly every
 * one: normalising 10,000 paths cost about 3 ms of a fresh process's CPU in
 * each place.
 */
export function normalRemotePath(remotePath: string): string {
  return remotePath !== "" && !NOT_NORMAL.test(remotePath)
    ? remotePath
    : posix.normalize(remotePath);
}
