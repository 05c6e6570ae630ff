/**
 * {@link createRuntime}: the Linux sandbox runtime over bubblewrap, overlayfs
 * and cgroups. What its sandboxes share on the host is made once by
 * runtime-host.ts; this file starts, tracks and stops them.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { invalidArgument, SandboxIacError } from "../../errors";
import { BASE_LAYER_ID, LAYERS_DIR } from "./constants";
import { PARTIAL_LAYER_PREFIX } from "./layer-copy";
import { ensureImageBaseLayer } from "./image-base";
import { hasImageLayer, importImageLayer } from "./image-layers";
import { captureLayer, type CaptureOptions } from "./layers";
import { tearDownHostNetwork } from "./network";
import { assertId, layerPaths, sandboxPaths } from "./paths";
import type { LinuxSandbox } from "./linux-sandbox";
import { BackgroundSet } from "./background-set";
import { openRuntimeHost, type RuntimeOptions } from "./runtime-host";
import { validateSpec } from "./runtime-spec";
import { launchSandbox } from "./sandbox";
import type { RuntimeSandbox, SandboxRuntime, SandboxSpec } from "./types";

export type { RuntimeOptions } from "./runtime-host";

/**
 * Creates the runtime: opens it on the host (runtime-host.ts: checks, the
 * clean-up of crashed services' leftovers, the base layer, the network),
 * then starts and stops sandboxes on it.
 */
export async function createRuntime(options: RuntimeOptions): Promise<SandboxRuntime> {
  const host = await openRuntimeHost(options);
  const { dataDir, log } = host;
  const running = new Map<string, RuntimeSandbox>();
  const starting = new Set<string>();
  // Ids in the background (setBackground): asked again when a start makes its cgroup, and
  // waited for between a start's host phases.
  const background = new BackgroundSet();
  // Sources of deleted volumes (each volume's path is unique): few, and checked by every start.
  const detachedSources = new Set<string>();

  /** Detaches `source` from `sandbox`; a failure is logged (the sandbox keeps it until it stops). */
  async function detachFrom(sandbox: RuntimeSandbox, source: string): Promise<boolean> {
    try {
      return await (sandbox as LinuxSandbox).detachVolume(source);
    } catch (err) {
      log(
        `sandbox ${sandbox.sandboxID}: ${SandboxIacError.from(err, { operation: "runtime.detachVolume" }).reason}`,
      );
      return false;
    }
  }

  async function detachVolume(source: string): Promise<number> {
    detachedSources.add(source);
    // Sequential: one setns and unmount each, over the sandboxes of one service.
    let n = 0;
    for (const sandbox of [...running.values()]) if (await detachFrom(sandbox, source)) n++;
    return n;
  }
  let closed = false;

  function setBackground(sandboxIDs: Iterable<string>, on: boolean): void {
    for (const id of sandboxIDs) {
      background.set(id, on);
      // A cgroup not made yet is left alone: its start asks inBackground() when it makes it.
      host.cgroups.setIdle(`${host.cgroupPrefix}${id}`, on);
    }
  }

  async function start(spec: SandboxSpec): Promise<RuntimeSandbox> {
    const op = "runtime.start";
    if (closed)
      throw new SandboxIacError("conflict", "the runtime is closed; create a new one", {
        operation: op,
      });
    await validateSpec(op, dataDir, spec);
    if (running.has(spec.sandboxID) || starting.has(spec.sandboxID)) {
      throw new SandboxIacError("conflict", "the sandbox is already running; stop it first", {
        operation: op,
        resourceId: spec.sandboxID,
      });
    }
    if (running.size + starting.size >= host.maxSandboxes) {
      throw new SandboxIacError(
        "rate_limited",
        `the service already runs its maximum of ${host.maxSandboxes} sandboxes (serve --max-sandboxes); kill or pause a sandbox, or restart the service with a higher --max-sandboxes`,
        { operation: op, resourceId: spec.sandboxID },
      );
    }
    starting.add(spec.sandboxID);
    try {
      let stopped = false;
      // What every sandbox shares on the host, and this sandbox's cgroup and callbacks.
      const sandbox: RuntimeSandbox = await launchSandbox(spec, {
        ...host,
        cgroupName: `${host.cgroupPrefix}${spec.sandboxID}`,
        inBackground: () => background.has(spec.sandboxID),
        whenForeground: () => background.whenForeground(spec.sandboxID),
        onStopped: () => {
          stopped = true;
          // One sandbox per id is ever registered; during its own start it is not registered yet.
          if (!starting.has(spec.sandboxID)) running.delete(spec.sandboxID);
        },
      });
      // It may already have died between its health answer and here.
      if (!stopped) running.set(spec.sandboxID, sandbox);
      // A volume deleted while the sandbox started was not taken from it then.
      for (const b of spec.binds ?? [])
        if (detachedSources.has(b.source)) await detachFrom(sandbox, b.source);
      return sandbox;
    } finally {
      starting.delete(spec.sandboxID);
    }
  }

  async function destroy(sandboxID: string): Promise<void> {
    const op = "runtime.destroy";
    assertId(op, "sandboxID", sandboxID);
    if (running.has(sandboxID) || starting.has(sandboxID)) {
      throw new SandboxIacError(
        "conflict",
        "the sandbox is running; stop it before destroying it",
        {
          operation: op,
          resourceId: sandboxID,
        },
      );
    }
    await fs.rm(sandboxPaths(dataDir, sandboxID).dir, { recursive: true, force: true });
  }

  async function deleteLayer(layerId: string): Promise<void> {
    const op = "runtime.deleteLayer";
    assertId(op, "layerId", layerId);
    if (layerId === BASE_LAYER_ID) {
      throw invalidArgument(
        op,
        "layerId",
        layerId,
        "a layer other than the built-in base",
        "the base layer is assembled from the host and always kept",
      );
    }
    await fs.rm(layerPaths(dataDir, layerId).dir, { recursive: true, force: true });
  }

  async function close(): Promise<void> {
    closed = true;
    background.releaseAll();
    // Sequential: each stop is a few cgroup writes, and the count is the caller's own sandboxes.
    for (const sandbox of [...running.values()]) await sandbox.stop();
    running.clear();
    await host.hostNetwork.edge.close();
    await tearDownHostNetwork(host.nftTable);
    host.mounts.close();
  }

  return {
    baseLayerId: BASE_LAYER_ID,
    nftTable: host.nftTable,
    maxSandboxes: host.maxSandboxes,
    sandboxesMemoryBytes: host.sandboxesMemoryBytes,
    setBackground,
    start,
    isolation: host.isolation,
    captureLayer: async (sandboxID: string, opts?: CaptureOptions) => {
      assertId("runtime.captureLayer", "sandboxID", sandboxID);
      const live = running.get(sandboxID) as { holderPid?: number } | undefined;
      return captureLayer(dataDir, sandboxID, live?.holderPid, opts);
    },
    hasImageLayer: (digest) => hasImageLayer(dataDir, digest),
    importImageLayer: (digest, blob, compression) =>
      importImageLayer(dataDir, digest, blob, compression),
    imageBaseLayer: (imageLayers) => {
      for (const id of imageLayers) assertId("runtime.imageBaseLayer", "imageLayers", id);
      return ensureImageBaseLayer(dataDir, imageLayers, host.agentLibs.nodeArgv);
    },
    pullDir: async () => {
      const dir = path.join(
        dataDir,
        LAYERS_DIR,
        `${PARTIAL_LAYER_PREFIX}pull-${randomBytes(6).toString("hex")}`,
      );
      await fs.mkdir(dir, { mode: 0o700 });
      return dir;
    },
    detachVolume,
    destroy,
    deleteLayer,
    close,
  };
}
