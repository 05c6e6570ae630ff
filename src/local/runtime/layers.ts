/**
 * Immutable layers: capturing a sandbox's writable layer and deleting layers.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { AGENT_MOUNT_DIR, AGENT_RUN_DIR_IN_SANDBOX } from "../../wire/sandbox-paths";
import { BASE_LAYER_ID, ID_PATTERN, LAYER_ROOT, LAYERS_DIR, MAX_ID_LENGTH } from "./constants";
import { execHost } from "./exec";
import { copyUpperOut } from "./disk";
import { copyUpperDelta } from "./layer-delta";
import { STAGING } from "./mounts";
import { PARTIAL_LAYER_PREFIX } from "./layer-copy";
import { layerPaths, sandboxPaths } from "./paths";

/** Random bytes in the id of a captured layer (its hex digits name the layer's directory). */
const CAPTURED_LAYER_ID_BYTES = 8;

/**
 * Ids of every stored layer under the data dir: captured ones, image layers
 * and images' conventions layers. The built-in base layer and partial copies
 * (`.tmp-*`, swept at start) are not among them.
 */
export async function listLayers(dataDir: string): Promise<string[]> {
  const names = await fs.readdir(path.join(dataDir, LAYERS_DIR)).catch(() => [] as string[]);
  return names.filter(
    (n) => ID_PATTERN.test(n) && n.length <= MAX_ID_LENGTH && n !== BASE_LAYER_ID,
  );
}

/** Bytes the layer `layerId` takes on disk (`du`: blocks, hard links counted once); 0 when absent. */
export async function layerDiskBytes(dataDir: string, layerId: string): Promise<number> {
  const dir = layerPaths(dataDir, layerId).dir;
  const present = await fs.stat(dir).then(
    () => true,
    () => false,
  );
  if (!present) return 0;
  const { stdout } = await execHost("runtime.layerDiskBytes", "du", ["-s", "-B1", "-x", dir]);
  return Number(stdout.split(/\s/)[0]) || 0;
}

/** True when the layer holds no file at all (a step that changed nothing). */
export async function layerIsEmpty(dataDir: string, layerId: string): Promise<boolean> {
  const l = layerPaths(dataDir, layerId);
  const entries = async (p: string) => (await fs.readdir(p).catch(() => ["?"])).length;
  return (await entries(l.root)) === 0 && (await entries(l.usr)) === 0;
}

/** Options of {@link captureLayer}. */
export interface CaptureOptions {
  /**
   * Only what changed since the previous capture of this (running) sandbox
   * made with this option, as a layer that stacks on the ones captured before.
   * @default false (the whole writable layer)
   */
  sinceLastCapture?: boolean | undefined;
}

/** The manifest of the previous incremental capture, beside the sandbox's disk. */
const CAPTURE_MANIFEST = "capture-manifest.json";

/**
 * Copies the writable layer `upper/{root,usr}` out of the sandbox's disk
 * into a new layer and returns its id. `cp -a` as root keeps what overlayfs
 * needs: whiteouts (0/0 character devices) and opaque directories
 * (`user.overlay.opaque` xattrs: the overlays are mounted with `userxattr`).
 * `holderPid` is given while the sandbox runs (frozen by the caller); with
 * `sinceLastCapture` (running sandboxes only) just the changes since the
 * previous such capture are copied (see layer-delta.ts).
 */
export async function captureLayer(
  dataDir: string,
  sandboxID: string,
  holderPid: number | undefined,
  opts: CaptureOptions = {},
): Promise<string> {
  const operation = "runtime.captureLayer";
  const sbx = sandboxPaths(dataDir, sandboxID);
  const present = await fs.stat(sbx.disk).then(
    () => true,
    () => false,
  );
  if (!present) {
    throw new SandboxIacError("not_found", `no disk at ${sbx.disk}: start the sandbox first`, {
      operation,
      resourceId: sandboxID,
    });
  }
  if (opts.sinceLastCapture && holderPid === undefined) {
    throw new SandboxIacError(
      "invalid_argument",
      "an incremental capture needs the sandbox running (frozen): start it first",
      { operation, resourceId: sandboxID },
    );
  }
  const layerId = randomBytes(CAPTURED_LAYER_ID_BYTES).toString("hex");
  const tmp = path.join(dataDir, LAYERS_DIR, `${PARTIAL_LAYER_PREFIX}${layerId}`);
  try {
    await fs.mkdir(tmp, { recursive: true });
    if (opts.sinceLastCapture) {
      await copyUpperDelta(
        holderPid!,
        `${STAGING.disk}/upper`,
        tmp,
        path.join(sbx.dir, CAPTURE_MANIFEST),
      );
    } else {
      await copyUpperOut(sbx.disk, tmp, holderPid);
    }
    // Mount points of the agent are the runtime's, not the template's.
    for (const leftover of [AGENT_MOUNT_DIR, AGENT_RUN_DIR_IN_SANDBOX]) {
      await fs.rm(path.join(tmp, LAYER_ROOT, leftover), { recursive: true, force: true });
    }
    await fs.rename(tmp, layerPaths(dataDir, layerId).dir);
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
  return layerId;
}

/** True when the layer `layerId` exists with both of its directories. */
export async function layerExists(dataDir: string, layerId: string): Promise<boolean> {
  const l = layerPaths(dataDir, layerId);
  const isDir = (p: string) =>
    fs.stat(p).then(
      (s) => s.isDirectory(),
      () => false,
    );
  return (await isDir(l.root)) && (await isDir(l.usr));
}
