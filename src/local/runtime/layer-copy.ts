/**
 * Layer copies that a crash cannot leave half-done: each copy runs under the
 * parent-death signal, so it stops when the service dies, and what a dead
 * service left in the layers directory (`.tmp-*`, never renamed into place)
 * is removed when the next runtime starts.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { LAYERS_DIR } from "./constants";
import { execHost } from "./exec";

/** Prefix of a layer being assembled; only a complete layer is renamed to its id. */
export const PARTIAL_LAYER_PREFIX = ".tmp-";

/** util-linux's setpriv, which can set the parent-death signal before exec. */
const SETPRIV = "/usr/bin/setpriv";

let setprivPresent: Promise<boolean> | undefined;

/**
 * `cp -a src dst`, killed with the service: a copy that outlived it would
 * keep writing into a directory the next start removes.
 */
export async function copyTree(operation: string, src: string, dst: string): Promise<void> {
  setprivPresent ??= fs.access(SETPRIV).then(
    () => true,
    () => false,
  );
  if (await setprivPresent) {
    await execHost(operation, SETPRIV, ["--pdeathsig", "KILL", "--", "cp", "-a", src, dst]);
  } else {
    await execHost(operation, "cp", ["-a", src, dst]);
  }
}

/** Removes the partial layers a crashed service left; returns how many. */
export async function removePartialLayers(dataDir: string): Promise<number> {
  const dir = path.join(dataDir, LAYERS_DIR);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const partial = names.filter((n) => n.startsWith(PARTIAL_LAYER_PREFIX));
  for (const n of partial) await fs.rm(path.join(dir, n), { recursive: true, force: true });
  return partial.length;
}
