/**
 * File metadata stored as `user.e2b.*` extended attributes, as envd keeps it.
 *
 * Node has no xattr API; `@napi-rs/xattr` is a native addon over the
 * `listxattr`/`getxattr` family (the `l*` variants: a symlink's own
 * attributes, never its target's, so a link cannot make a Stat read metadata
 * from elsewhere). Its synchronous calls are used on purpose: one `llistxattr`
 * costs about 2 µs, while a thread-pool hop per path made a 1000-entry ListDir
 * 40 times slower; large listings yield to the event loop between batches.
 *
 * The addon is loaded by its absolute path in the agent bundle
 * (scripts/bundle-agent.js copies it to `native/`), never through module
 * resolution, which would walk up to a `/node_modules` that code in the
 * sandbox can write. Without it, metadata is unsupported: reads return
 * nothing and writes report false.
 *
 * @module
 */
import * as nodePath from "node:path";
import { METADATA_XATTR_PREFIX } from "./constants";

type XattrApi = typeof import("@napi-rs/xattr");

/** The addon's place beside the bundled `agent.js`. */
const ADDON_PATH = nodePath.join(__dirname, "native", "xattr.node");

/** Paths read between two yields to the event loop. */
const READ_BATCH = 256;

let api: XattrApi | null | undefined;

function xattr(): XattrApi | null {
  if (api === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      api = require(ADDON_PATH) as XattrApi;
    } catch (err) {
      process.stderr.write(
        `agent: file metadata is unavailable, the xattr addon did not load: ${err instanceof Error ? err.message : String(err)}\n`,
      );
      api = null;
    }
  }
  return api;
}

function readOne(x: XattrApi, path: string): Record<string, string> {
  const meta: Record<string, string> = {};
  try {
    for (const name of x.listAttributesSync(path)) {
      if (!name.startsWith(METADATA_XATTR_PREFIX)) continue;
      const value = x.getAttributeSync(path, name);
      if (value !== null) meta[name.slice(METADATA_XATTR_PREFIX.length)] = value.toString("utf8");
    }
  } catch {
    // Gone, unreadable or no xattr support here: no metadata, as envd reports it.
  }
  return meta;
}

/** The metadata of each path (empty maps where none or unsupported), in order. */
export async function readMetadata(paths: string[]): Promise<Record<string, string>[]> {
  const x = xattr();
  if (!x) return paths.map(() => ({}));
  const out: Record<string, string>[] = [];
  for (const path of paths) {
    if (out.length > 0 && out.length % READ_BATCH === 0) await new Promise((r) => setImmediate(r));
    out.push(readOne(x, path));
  }
  return out;
}

/**
 * Replaces the whole metadata set of `path`.
 *
 * @returns false when metadata is unsupported in this sandbox.
 * @throws the filesystem's error when an attribute cannot be written.
 */
export async function writeMetadata(path: string, meta: Record<string, string>): Promise<boolean> {
  const x = xattr();
  if (!x) return false;
  for (const name of await x.listAttributes(path)) {
    if (name.startsWith(METADATA_XATTR_PREFIX)) await x.removeAttribute(path, name);
  }
  for (const [key, value] of Object.entries(meta)) {
    await x.setAttribute(path, METADATA_XATTR_PREFIX + key, Buffer.from(value, "utf8"));
  }
  return true;
}
