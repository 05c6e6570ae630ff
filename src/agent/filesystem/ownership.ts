/**
 * Creating directories on behalf of a user: missing parents are created one by
 * one (mode 0755) and each is chowned to the user, as envd does.
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { SandboxUser } from "../users";

/** Creates `dir` and its missing parents, owned by `user`. @returns whether `dir` was created */
export async function makeDirsAs(dir: string, user: SandboxUser): Promise<boolean> {
  const missing: string[] = [];
  let cur = path.resolve(dir);
  for (;;) {
    try {
      await fs.promises.stat(cur);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      missing.push(cur);
      const parent = path.dirname(cur);
      if (parent === cur) break;
      cur = parent;
    }
  }
  for (const d of missing.reverse()) {
    try {
      await fs.promises.mkdir(d, { mode: 0o755 });
    } catch (err) {
      // Another request may have created it in between.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      continue;
    }
    await fs.promises.chown(d, user.uid, user.gid);
  }
  return missing.length > 0;
}
