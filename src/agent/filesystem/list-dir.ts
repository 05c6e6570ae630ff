/**
 * `ListDir`: a pre-order, lexically sorted walk to `depth` levels
 * (docs/envd.md#filesystem-behaviour). Symlinks are followed at the root only.
 *
 * @module
 */
import type { EntryInfo } from "../../gen/envd/filesystem/filesystem_pb";
import * as fs from "node:fs";
import * as path from "node:path";
import { fromStat, isMissing } from "../entry-info";
import { readMetadata } from "../xattr";

/** Entries of one directory whose lstat calls are in flight at once. */
const STAT_BATCH = 64;

async function lstatOrMissing(p: string): Promise<fs.BigIntStats | undefined> {
  try {
    return await fs.promises.lstat(p, { bigint: true });
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/** Lists `root` (a directory, or a link to one) to `depth` levels; paths are built from `root`. */
export async function listDir(root: string, depth: number, realRoot: string): Promise<EntryInfo[]> {
  const entries: EntryInfo[] = [];
  const real: string[] = [];
  const walk = async (shown: string, actual: string, level: number): Promise<void> => {
    let names: string[];
    try {
      names = await fs.promises.readdir(actual);
    } catch (err) {
      if (isMissing(err) && level > 1) return;
      throw err;
    }
    names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (let i = 0; i < names.length; i += STAT_BATCH) {
      const batch = names.slice(i, i + STAT_BATCH);
      // One lstat after another cost a thread-pool round trip each; a batch
      // in flight at once keeps the pool busy, and the order stays the names'.
      const stats = await Promise.all(batch.map((name) => lstatOrMissing(path.join(actual, name))));
      for (const [j, name] of batch.entries()) {
        const st = stats[j];
        if (st === undefined) continue; // disappeared during the walk
        const shownChild = path.join(shown, name);
        const actualChild = path.join(actual, name);
        entries.push(await fromStat(actualChild, shownChild, st));
        real.push(actualChild);
        if (st.isDirectory() && level < depth) await walk(shownChild, actualChild, level + 1);
      }
    }
  };
  await walk(root, realRoot, 1);
  const metadata = await readMetadata(real);
  entries.forEach((e, i) => (e.metadata = metadata[i] ?? {}));
  return entries;
}
