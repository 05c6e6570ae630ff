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
    for (const name of names) {
      const shownChild = path.join(shown, name);
      const actualChild = path.join(actual, name);
      let st: fs.BigIntStats;
      try {
        st = await fs.promises.lstat(actualChild, { bigint: true });
      } catch (err) {
        if (isMissing(err)) continue; // disappeared during the walk
        throw err;
      }
      entries.push(await fromStat(actualChild, shownChild, st));
      real.push(actualChild);
      if (st.isDirectory() && level < depth) await walk(shownChild, actualChild, level + 1);
    }
  };
  await walk(root, realRoot, 1);
  const metadata = await readMetadata(real);
  entries.forEach((e, i) => (e.metadata = metadata[i] ?? {}));
  return entries;
}
