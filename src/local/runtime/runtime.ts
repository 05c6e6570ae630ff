/**
 * {@link createRuntime}: the Linux sandbox runtime over bubblewrap, overlayfs
 * and cgroups.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { invalidArgument, SandboxIacError } from "../../errors";
import { agentBundleDirOnHost } from "../agent-launch";
import { ensureBaseLayer } from "./base-layer";
import { detectCgroups } from "./cgroup-detect";
import { fileTableWarning, ptysPerSandbox, readHostLimits } from "./host-limits";
import {
  BASE_LAYER_ID,
  DEFAULT_START_TIMEOUT_MS,
  LAYERS_DIR,
  SANDBOXES_DIR,
  STAGING_DIR,
} from "./constants";
import { assertDiskSize } from "./disk";
import { assertNetwork } from "./egress-rules";
import { PARTIAL_LAYER_PREFIX, removePartialLayers } from "./layer-copy";
import { prepareAgentLibs } from "./agent-libs";
import { ensureImageBaseLayer } from "./image-base";
import { hasImageLayer, importImageLayer } from "./image-layers";
import { captureLayer, layerExists, type CaptureOptions } from "./layers";
import { MountHelper } from "./mounts";
import { removeOrphanCgroups } from "./orphan-cgroups";
import {
  newTableName,
  setUpHostNetwork,
  tearDownHostNetwork,
  type HostEdgeOptions,
} from "./network";
import { openEdgeCa } from "../edge/edge-ca";
import { assertDataDir, assertId, layerPaths, sandboxPaths } from "./paths";
import type { LinuxSandbox } from "./linux-sandbox";
import { launchSandbox } from "./sandbox";
import { ensureSeccompFilter } from "./seccomp";
import { reclaimDeadSlots } from "./slots";
import { unmountStale } from "./stale-mounts";
import type { RuntimeSandbox, SandboxRuntime, SandboxSpec } from "./types";

/** Options of {@link createRuntime}. */
export interface RuntimeOptions {
  /** Absolute directory holding layers and sandboxes; created when missing. */
  dataDir: string;
  /**
   * Receives one line per notable event (sandbox launched, stale state cleaned).
   * @default lines are dropped
   */
  log?: ((line: string) => void) | undefined;
  /**
   * Host directory holding the agent bundle `agent.js`, bound read-only at `/.sandbox-iac/agent`.
   * @default agentBundleDirOnHost(): the `dist/agent` built by `npm run build`
   */
  agentBundleDir?: string;
  /**
   * How long `start()` waits for the agent's `GET /health` to answer 204
   * while the sandbox makes no progress (uses no CPU); a start that keeps
   * progressing is waited for up to 5 minutes.
   * @default 30000 ms
   */
  startTimeoutMs?: number;
  /**
   * IPv4 addresses of the DNS resolvers the sandboxes' resolv.conf names, to
   * which each sandbox may send DNS (port 53) under its own egress rules.
   * @default the nameservers of the host's /etc/resolv.conf, loopback ones left out
   */
  dnsResolvers?: string[] | undefined;
  /**
   * Most sandboxes running at once (API sandboxes, warm-pool members and
   * template builds together); `start()` refuses more with `rate_limited`.
   * It also divides the host's PTYs among sandboxes.
   * @default as many sandboxes of 512 MiB as the memory left to sandboxes holds (the host's memory minus an eighth, at least 1 GiB)
   */
  maxSandboxes?: number | undefined;
  /**
   * What the egress edge needs to apply `network.rules`: secret values by
   * name, a sink for sandbox log lines, and CAs it trusts upstream besides
   * the host's store.
   * @default no secrets, lines dropped, the host's store only
   */
  edge?: Omit<HostEdgeOptions, "ca"> | undefined;
}

/**
 * Creates the runtime: checks the host (root, cgroups), cleans what a crashed
 * service left under `dataDir` (mounts, cgroups) and the empty cgroups of
 * any service that is gone, and assembles the base layer on first use.
 */
export async function createRuntime(options: RuntimeOptions): Promise<SandboxRuntime> {
  const operation = "runtime.create";
  assertDataDir(operation, options.dataDir);
  if (process.getuid?.() !== 0) {
    throw new SandboxIacError(
      "unsupported",
      "the local sandbox runtime needs root (overlay mounts, cgroups); run the service as root",
      {
        operation,
      },
    );
  }
  const dataDir = path.resolve(options.dataDir);
  const log = options.log ?? (() => undefined);
  await fs.mkdir(path.join(dataDir, LAYERS_DIR), { recursive: true });
  await fs.mkdir(path.join(dataDir, SANDBOXES_DIR), { recursive: true });
  const host = await readHostLimits();
  const maxSandboxes = options.maxSandboxes ?? host.defaultMaxSandboxes;
  if (!Number.isInteger(maxSandboxes) || maxSandboxes < 1)
    throw invalidArgument(operation, "maxSandboxes", maxSandboxes, "an integer >= 1");
  const ptysMax = ptysPerSandbox(host, maxSandboxes);
  const fileTable = fileTableWarning(host);
  if (fileTable) log(fileTable);
  const cgroups = await detectCgroups({
    memoryBytes: host.sandboxesMemoryBytes,
    pidsMax: host.sandboxesPidsMax,
  });
  // Several services (and test files) may share a cgroup; the data dir tells their sandboxes apart.
  const cgroupPrefix = `${createHash("sha256").update(dataDir).digest("hex").slice(0, 10)}-`;
  await cgroups.removeStale(cgroupPrefix);
  // Other data dirs' too, of services killed for good (kill -9 of a test run).
  const orphans = await removeOrphanCgroups(cgroups);
  if (orphans > 0) log(`runtime: removed ${orphans} empty cgroups of services that are gone`);
  const unmounted = await unmountStale(dataDir);
  if (unmounted > 0) log(`runtime: unmounted ${unmounted} stale mounts under ${dataDir}`);
  const partial = await removePartialLayers(dataDir);
  if (partial > 0) log(`runtime: removed ${partial} half-copied layers under ${dataDir}`);
  // Before the base layer, whose system store trusts it.
  const edgeCa = openEdgeCa(dataDir);
  await ensureBaseLayer(dataDir, edgeCa.pem);
  await fs.mkdir(STAGING_DIR, { recursive: true, mode: 0o755 });
  // Claims of services that died (kill -9): their holders died with them, and so did their veths.
  await reclaimDeadSlots();
  const nftTable = newTableName();
  const hostNetwork = await setUpHostNetwork(nftTable, options.dnsResolvers, {
    ...options.edge,
    ca: edgeCa,
  });
  const seccompFile = await ensureSeccompFilter(dataDir);
  const mounts = new MountHelper();
  const nodeBinary = await fs.realpath(process.execPath);
  const agentLibs = await prepareAgentLibs(dataDir, nodeBinary);
  const agentBundleDir = options.agentBundleDir ?? agentBundleDirOnHost();
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  log(
    `runtime: data dir ${dataDir}, cgroup v${cgroups.version}, agent ${agentBundleDir}, at most ${maxSandboxes} sandboxes`,
  );
  const isolation = describeIsolation(nftTable, hostNetwork.resolvers, ptysMax);

  const running = new Map<string, RuntimeSandbox>();
  const starting = new Set<string>();
  // Ids in the background (setBackground): asked again when a start makes its cgroup.
  const background = new Set<string>();
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
      if (on) background.add(id);
      else background.delete(id);
      // A cgroup not made yet is left alone: its start asks inBackground() when it makes it.
      cgroups.setIdle(`${cgroupPrefix}${id}`, on);
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
    if (running.size + starting.size >= maxSandboxes) {
      throw new SandboxIacError(
        "rate_limited",
        `the service already runs its maximum of ${maxSandboxes} sandboxes (serve --max-sandboxes); kill or pause a sandbox, or restart the service with a higher --max-sandboxes`,
        { operation: op, resourceId: spec.sandboxID },
      );
    }
    starting.add(spec.sandboxID);
    try {
      let stopped = false;
      const sandbox: RuntimeSandbox = await launchSandbox(spec, {
        dataDir,
        cgroups,
        cgroupName: `${cgroupPrefix}${spec.sandboxID}`,
        inBackground: () => background.has(spec.sandboxID),
        nodeBinary,
        agentBundleDir,
        agentLibs,
        seccompFile,
        hostNetwork,
        mounts,
        ptysMax,
        startTimeoutMs,
        log,
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
    // Sequential: each stop is a few cgroup writes, and the count is the caller's own sandboxes.
    for (const sandbox of [...running.values()]) await sandbox.stop();
    running.clear();
    await hostNetwork.edge.close();
    await tearDownHostNetwork(nftTable);
    mounts.close();
  }

  return {
    baseLayerId: BASE_LAYER_ID,
    nftTable,
    maxSandboxes,
    sandboxesMemoryBytes: host.sandboxesMemoryBytes,
    setBackground,
    start,
    isolation,
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
      return ensureImageBaseLayer(dataDir, imageLayers, agentLibs.nodeArgv);
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

async function validateSpec(operation: string, dataDir: string, spec: SandboxSpec): Promise<void> {
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

/** The one line saying what isolation sandboxes get (printed at start). */
function describeIsolation(
  nftTable: string,
  resolvers: readonly string[],
  ptysMax: number,
): string {
  return [
    "isolation: user namespace per sandbox (root inside = an unprivileged host uid range)",
    "idmapped read-only layers",
    "seccomp (Docker's default profile as an allow-list; no io_uring, no kernel AIO)",
    "/proc masked as runc does",
    `own network namespace per sandbox (veth + nftables table ${nftTable}${resolvers.length ? `, DNS via ${resolvers.join(" ")}` : ""})`,
    "disk quota (ext4 image per sandbox)",
    "cgroup cpu/memory/pids limits under one cgroup that leaves the host headroom, RLIMIT_NOFILE 4096",
    `own devpts with at most ${ptysMax} PTYs`,
  ].join("; ");
}
