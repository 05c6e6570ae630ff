/**
 * Layers unpacked from container images, stored once per layer digest and
 * shared by every image and template that uses them.
 *
 * Each layer tar is extracted by GNU tar (streaming from the blob file, never
 * whole in memory; owners numeric, modes kept; tar refuses `..` and absolute
 * member names and delays symlinks that could lead out) into its own
 * directory, then its OCI whiteouts are rewritten into the form overlayfs
 * reads on these `userxattr` mounts: `.wh.NAME` becomes a 0/0 character
 * device `NAME`, `.wh..wh..opq` becomes `user.overlay.opaque=y` on its
 * directory. Keeping one directory per layer (instead of `umoci unpack`'s
 * merged rootfs) is what lets layers be shared by digest and mounted as
 * idmapped overlay lowers like every other layer. The image's `usr` is split
 * into the layer's `usr` directory, since `/usr` is its own overlay.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { LAYER_ROOT, LAYER_USR, LAYERS_DIR, SYSTEM_PYTHON } from "./constants";
import { execHost } from "./exec";
import { diesWithService, PARTIAL_LAYER_PREFIX } from "./layer-copy";
import { layerExists } from "./layers";
import { layerPaths } from "./paths";

/** Prefix of the ids of layers unpacked from image layers (the rest is the digest's hex). */
const IMAGE_LAYER_PREFIX = "oci";

/** How a layer blob is compressed (from its media type). */
export type LayerCompression = "gzip" | "zstd" | "none";

const OPERATION = "runtime.importImageLayer";

/** The layer id of the image layer with digest `sha256:<hex>`. */
function imageLayerId(digest: string): string {
  const m = /^sha256:([0-9a-f]{64})$/.exec(digest);
  if (!m) {
    throw new SandboxIacError("invalid_argument", `not a sha256 layer digest: ${digest}`, {
      operation: OPERATION,
    });
  }
  // 3 + 56 characters: under the 63 that ids (also hostnames) may have.
  return `${IMAGE_LAYER_PREFIX}${m[1].slice(0, 56)}`;
}

/** Rewrites OCI whiteouts under argv[1] into overlayfs whiteouts; never follows symlinks. */
const WHITEOUTS = `
import os, stat, sys
for d, dirs, files in os.walk(sys.argv[1]):
    for name in files:
        if not name.startswith(".wh."): continue
        p = os.path.join(d, name)
        os.unlink(p)
        if name == ".wh..wh..opq":
            os.setxattr(d, "user.overlay.opaque", b"y")
        else:
            t = os.path.join(d, name[4:])
            if os.path.lexists(t) and not os.path.isdir(t) : os.unlink(t)
            if not os.path.lexists(t): os.mknod(t, stat.S_IFCHR | 0o600, os.makedev(0, 0))
`;

/** Whether the image layer of digest `sha256:<hex>` is unpacked in the store. */
export async function hasImageLayer(dataDir: string, digest: string): Promise<boolean> {
  return layerExists(dataDir, imageLayerId(digest));
}

/**
 * Unpacks the layer blob `blob` (digest `digest`) into the layer store
 * unless it is there already; returns its layer id and whether it was reused.
 */
export async function importImageLayer(
  dataDir: string,
  digest: string,
  blob: string,
  compression: LayerCompression,
): Promise<{ layerId: string; reused: boolean }> {
  const layerId = imageLayerId(digest);
  if (await layerExists(dataDir, layerId)) return { layerId, reused: true };
  const tmp = path.join(
    dataDir,
    LAYERS_DIR,
    `${PARTIAL_LAYER_PREFIX}${layerId}-${randomBytes(4).toString("hex")}`,
  );
  const root = path.join(tmp, LAYER_ROOT);
  try {
    await fs.mkdir(root, { recursive: true, mode: 0o755 });
    const z = compression === "gzip" ? ["-z"] : compression === "zstd" ? ["--zstd"] : [];
    const [file, ...args] = diesWithService([
      "tar",
      "-x",
      ...z,
      "-f",
      blob,
      "-C",
      root,
      "--numeric-owner",
      "--same-owner",
      "--preserve-permissions",
    ]);
    await execHost(OPERATION, file, args);
    await execHost(OPERATION, SYSTEM_PYTHON, ["-I", "-S", "-c", WHITEOUTS, root]);
    await fs.chmod(root, 0o755);
    const usr = path.join(root, "usr");
    const st = await fs.lstat(usr).catch(() => undefined);
    if (st?.isDirectory()) await fs.rename(usr, path.join(tmp, LAYER_USR));
    else await fs.mkdir(path.join(tmp, LAYER_USR), { mode: 0o755 });
    try {
      await fs.rename(tmp, layerPaths(dataDir, layerId).dir);
    } catch (err) {
      // Another build unpacked the same digest meanwhile: theirs is as good as ours.
      if (!(await layerExists(dataDir, layerId))) throw err;
      await fs.rm(tmp, { recursive: true, force: true });
      return { layerId, reused: true };
    }
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
  return { layerId, reused: false };
}
