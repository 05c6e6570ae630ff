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

/** Prefix of a layer being assembled; only a complete layer is renamed to its id. */
export const PARTIAL_LAYER_PREFIX = ".tmp-";

/**
 * `argv` run so that it dies with the service (util-linux's setpriv sets the
 * parent-death signal, which survives exec): a copy that outlived the service
 * would keep writing into a directory the next start removes.
 */
export function diesWithService(argv: readonly string[]): string[] {
  return ["setpriv", "--pdeathsig", "KILL", "--", ...argv];
}

/** Removes the partial layers a crashed service left; returns how many. */
export async function removePartialLayers(dataDir: string): Promise<number> {
  const dir = path.join(dataDir, LAYERS_DIR);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const partial = names.filter((n) => n.startsWith(PARTIAL_LAYER_PREFIX));
  for (const n of partial) await fs.rm(path.join(dir, n), { recursive: true, force: true });
  return partial.length;
}
