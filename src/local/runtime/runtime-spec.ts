/**
 * What a runtime start's {@link SandboxSpec} must hold, checked before
 * anything is made: the id, CPU, memory, disk and network settings, and
 * layers that exist under the data dir.
 *
 * @module
 */
import * as path from "node:path";
import { invalidArgument, SandboxIacError } from "../../errors";
import { BASE_LAYER_ID, LAYERS_DIR } from "./constants";
import { assertDiskSize } from "./disk";
import { assertNetwork } from "./egress-rules";
import { layerExists } from "./layers";
import { assertId } from "./paths";
import type { SandboxSpec } from "./types";

/** Refuses `spec` with `invalid_argument` (or `not_found` for a missing layer), naming the field. */
export async function validateSpec(
  operation: string,
  dataDir: string,
  spec: SandboxSpec,
): Promise<void> {
  assertId(operation, "sandboxID", spec.sandboxID);
  if (!Number.isInteger(spec.cpuCount) || spec.cpuCount < 1) {
    throw invalidArgument(operation, "cpuCount", spec.cpuCount, "an integer >= 1");
  }
  if (!Number.isInteger(spec.memoryMB) || spec.memoryMB < 16) {
    throw invalidArgument(
      operation,
      "memoryMB",
      spec.memoryMB,
      "an integer >= 16 (MiB)",
      "the agent alone needs about 40 MiB; 128 or more is sensible",
    );
  }
  if (spec.diskSizeMB !== undefined) assertDiskSize(operation, spec.diskSizeMB);
  if (spec.network !== undefined) assertNetwork(operation, spec.network);
  if (!Array.isArray(spec.layers) || spec.layers.length === 0) {
    throw invalidArgument(
      operation,
      "layers",
      spec.layers,
      "a non-empty list of layer ids",
      `start from [${JSON.stringify(BASE_LAYER_ID)}]`,
    );
  }
  for (const id of spec.layers) {
    assertId(operation, "layers", id);
    if (!(await layerExists(dataDir, id))) {
      throw new SandboxIacError(
        "not_found",
        `layer ${JSON.stringify(id)} does not exist under ${path.join(dataDir, LAYERS_DIR)}`,
        {
          operation,
          resourceId: spec.sandboxID,
          field: "layers",
        },
      );
    }
  }
}
