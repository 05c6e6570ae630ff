/**
 * Removes mounts left under the data dir by an earlier service. Sandboxes
 * mount inside private namespaces, so normally there are none; this guards
 * against older layouts and manual debugging sessions.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import { execHost } from "./exec";

/** Lazily unmounts every mount point under `dataDir` (deepest first); returns how many. */
export async function unmountStale(dataDir: string): Promise<number> {
  const text = await fs.readFile("/proc/self/mountinfo", "utf8");
  const prefix = dataDir.endsWith("/") ? dataDir : `${dataDir}/`;
  const points = text
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((p): p is string => p !== undefined)
    .map(unescapeMountPath)
    .filter((p) => p.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
  for (const p of points) {
    await execHost("runtime.create", "umount", ["-l", p]).catch(() => undefined);
  }
  return points.length;
}

/** mountinfo escapes space, tab, newline and backslash as octal `\NNN`. */
export function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}
