/**
 * The runtime's disk layout under the data dir, and validation of the ids and
 * paths that end up in mount options.
 *
 * @module
 */
import * as path from "node:path";
import { invalidArgument } from "../../errors";
import {
  ID_PATTERN,
  LAYER_ROOT,
  LAYER_USR,
  LAYERS_DIR,
  MAX_ID_LENGTH,
  SANDBOXES_DIR,
} from "./constants";

/** Host paths of one sandbox's state. */
export interface SandboxPaths {
  /** `<dataDir>/sandboxes/<id>` (mode 0700, root's). */
  dir: string;
  /** The ext4 image holding `upper/{root,usr}` and `work/{root,usr}`. */
  disk: string;
  /** The agent socket on the host; the sandbox never sees this directory. */
  socket: string;
  /** Output of bwrap and the agent (bounded). */
  log: string;
}

/** Host paths of one layer. */
export interface LayerPaths {
  dir: string;
  root: string;
  usr: string;
}

/** Paths of the sandbox `sandboxID` under `dataDir`. */
export function sandboxPaths(dataDir: string, sandboxID: string): SandboxPaths {
  const dir = path.join(dataDir, SANDBOXES_DIR, sandboxID);
  return {
    dir,
    disk: path.join(dir, "disk.img"),
    socket: path.join(dir, "agent.sock"),
    log: path.join(dir, "agent.log"),
  };
}

/** Paths of the layer `layerId` under `dataDir`. */
export function layerPaths(dataDir: string, layerId: string): LayerPaths {
  const dir = path.join(dataDir, LAYERS_DIR, layerId);
  return { dir, root: path.join(dir, LAYER_ROOT), usr: path.join(dir, LAYER_USR) };
}

/** Throws `invalid_argument` unless `id` is a valid sandbox or layer id. */
export function assertId(operation: string, field: string, id: unknown): asserts id is string {
  if (typeof id !== "string" || !ID_PATTERN.test(id) || id.length > MAX_ID_LENGTH) {
    throw invalidArgument(
      operation,
      field,
      id,
      `1 to ${MAX_ID_LENGTH} lowercase letters or digits`,
      "use an id made of [a-z0-9]",
    );
  }
}

/**
 * Throws `invalid_argument` unless `dataDir` is absolute and free of the
 * characters overlayfs uses as option separators (`,`, `:`) or whitespace.
 */
export function assertDataDir(operation: string, dataDir: unknown): asserts dataDir is string {
  if (typeof dataDir !== "string" || !path.isAbsolute(dataDir) || /[,:\s\\]/.test(dataDir)) {
    throw invalidArgument(
      operation,
      "dataDir",
      dataDir,
      "an absolute path without commas, colons, backslashes or whitespace",
      "overlayfs mount options cannot carry those characters; pick another directory",
    );
  }
}
