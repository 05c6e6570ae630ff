/**
 * `ListDir`: a pre-order, lexically sorted walk to `depth` levels
 * (docs/envd.md#filesystem-behaviour). Symlinks are followed at the root only.
 *
 * The walk is bounded. envd walks whatever it is asked to (`/` to depth 123
 * is every file of the sandbox, proc included) and answers only when done;
 * here a listing stops with `resource_exhausted` past {@link MAX_ENTRIES}
 * entries, before the next directory's entries are stat'ed, so one request
 * costs at most about that many `lstat` calls (about 2 s on a loaded 2-core
 * machine), and a request the client has given up on (its connection closed,
 * or its `connect-timeout-ms` passed) stops at the next directory.
 *
 * Below the root, no path string is resolved again: each directory is opened
 * `O_DIRECTORY | O_NOFOLLOW` relative to its held parent, through
 * `/proc/self/fd/<fd>/<name>` (the magic link is the held directory itself),
 * and its entries are read and stat'ed through its own descriptor. A
 * directory swapped for a symlink between the parent's `lstat` and the open is
 * listed as seen but not entered, so the walk never leaves the tree it was
 * asked for, and a link cycle cannot make it loop.
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { EntryInfo } from "../../gen/envd/filesystem/filesystem_pb";
import * as fs from "node:fs";
import * as path from "node:path";
import { fromStat, isMissing } from "../entry-info";
import { readMetadata } from "../xattr";

/** Entries of one directory whose lstat calls are in flight at once. */
const STAT_BATCH = 64;

/**
 * Most entries one listing returns. Deep listings of project trees stay under
 * it; a walk of a whole root does not, and gets an error that says what to do
 * rather than seconds of work and a response of tens of megabytes.
 */
export const MAX_ENTRIES = 10_000;

/** Flags of every directory the walk opens. */
const DIR_FLAGS =
  fs.constants.O_RDONLY |
  fs.constants.O_DIRECTORY |
  fs.constants.O_NOFOLLOW |
  fs.constants.O_NONBLOCK;

/** The path of `name` relative to the held directory `dir`, or of `dir` itself. */
function at(dir: fs.promises.FileHandle, name?: string): string {
  return name === undefined ? `/proc/self/fd/${dir.fd}` : `/proc/self/fd/${dir.fd}/${name}`;
}

async function lstatOrMissing(p: string): Promise<fs.BigIntStats | undefined> {
  try {
    return await fs.promises.lstat(p, { bigint: true });
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/** Opens the directory `name` of `parent`; undefined when it vanished or is no longer a directory. */
async function openChildDir(
  parent: fs.promises.FileHandle,
  name: string,
): Promise<fs.promises.FileHandle | undefined> {
  try {
    return await fs.promises.open(at(parent, name), DIR_FLAGS);
  } catch (err) {
    // ENOENT/ENOTDIR: gone or replaced; ELOOP: replaced by a symlink.
    if (isMissing(err) || (err as NodeJS.ErrnoException).code === "ELOOP") return undefined;
    throw err;
  }
}

/**
 * Lists `root` (a directory, or a link to one) to `depth` levels; paths are
 * built from `root`, the directory read is `realRoot`.
 *
 * @param signal aborted when the caller has gone; the walk then stops.
 * @throws ConnectError `resource_exhausted` past {@link MAX_ENTRIES} entries.
 */
export async function listDir(
  root: string,
  depth: number,
  realRoot: string,
  signal?: AbortSignal,
): Promise<EntryInfo[]> {
  const entries: EntryInfo[] = [];
  /** `shown`: the path reported; `actual`: the same below `realRoot`, only ever reported. */
  const walk = async (
    shown: string,
    actual: string,
    dir: fs.promises.FileHandle,
    level: number,
  ): Promise<void> => {
    signal?.throwIfAborted();
    const names = await fs.promises.readdir(at(dir));
    if (entries.length + names.length > MAX_ENTRIES) {
      throw new ConnectError(
        `list ${root} to depth ${depth}: more than ${MAX_ENTRIES} entries: list a subdirectory or pass a smaller depth`,
        Code.ResourceExhausted,
      );
    }
    names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (let i = 0; i < names.length; i += STAT_BATCH) {
      const batch = names.slice(i, i + STAT_BATCH);
      // One lstat after another cost a thread-pool round trip each; a batch
      // in flight at once keeps the pool busy, and the order stays the names'.
      const paths = batch.map((name) => at(dir, name));
      const stats = await Promise.all(paths.map(lstatOrMissing));
      // Read while `dir` is held: the paths go through its descriptor.
      const metadata = await readMetadata(paths);
      for (const [j, name] of batch.entries()) {
        const st = stats[j];
        if (st === undefined) continue; // disappeared during the walk
        const shownChild = path.join(shown, name);
        const actualChild = path.join(actual, name);
        const entry = await fromStat(paths[j], shownChild, st);
        // A broken link reports its own path, which is not the descriptor's.
        if (entry.symlinkTarget === paths[j]) entry.symlinkTarget = actualChild;
        entry.metadata = metadata[j] ?? {};
        entries.push(entry);
        if (!st.isDirectory() || level >= depth) continue;
        const child = await openChildDir(dir, name);
        if (child === undefined) continue;
        try {
          await walk(shownChild, actualChild, child, level + 1);
        } finally {
          await child.close();
        }
      }
    }
  };
  const top = await fs.promises.open(realRoot, DIR_FLAGS);
  try {
    await walk(root, realRoot, top, 1);
  } finally {
    await top.close();
  }
  return entries;
}
