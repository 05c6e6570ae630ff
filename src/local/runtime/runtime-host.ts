/**
 * Opening the runtime on the host: the checks (root, the data dir, the
 * sandbox limit), the clean-up of what services that are gone left behind
 * (cgroups, mounts, half-copied layers, slots), the base layer, the host
 * network and its egress edge, the seccomp filter and the agent's files.
 * runtime.ts starts and stops sandboxes over what {@link openRuntimeHost}
 * returns.
 *
 * @module
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { invalidArgument, SandboxIacError } from "../../errors";
import { agentBundleDirOnHost } from "../agent-launch";
import { openEdgeCa } from "../edge/edge-ca";
import { prepareAgentLibs, type AgentLibs } from "./agent-libs";
import { ensureBaseLayer } from "./base-layer";
import { detectCgroups } from "./cgroup-detect";
import type { CgroupDriver } from "./cgroups";
import { DEFAULT_START_TIMEOUT_MS, LAYERS_DIR, SANDBOXES_DIR, STAGING_DIR } from "./constants";
import { fileTableWarning, ptysPerSandbox, readHostLimits } from "./host-limits";
import { removePartialLayers } from "./layer-copy";
import { MountHelper } from "./mounts";
import { newTableName, setUpHostNetwork, type HostEdgeOptions, type HostNetwork } from "./network";
import { removeOrphanCgroups } from "./orphan-cgroups";
import { assertDataDir } from "./paths";
import { ensureSeccompFilter } from "./seccomp";
import { reclaimDeadSlots } from "./slots";
import { unmountStale } from "./stale-mounts";

/** Options of `createRuntime` (runtime.ts), which opens the host with them. */
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

/** What the runtime's sandboxes share on the host, made once when it opens. */
export interface RuntimeHost {
  /** The data dir, absolute. */
  dataDir: string;
  log: (line: string) => void;
  /** Most sandboxes running at once. */
  maxSandboxes: number;
  /** The memory every sandbox shares (the host's memory minus an eighth). */
  sandboxesMemoryBytes: number;
  /** PTYs each sandbox's devpts may hold. */
  ptysMax: number;
  cgroups: CgroupDriver;
  /** Starts the names of this service's cgroups: several services may share a hierarchy. */
  cgroupPrefix: string;
  /** The nftables table of this service's sandboxes. */
  nftTable: string;
  hostNetwork: HostNetwork;
  /** The compiled seccomp filter every sandbox loads. */
  seccompFile: string;
  mounts: MountHelper;
  /** The host's Node binary, resolved: the agent runs on it. */
  nodeBinary: string;
  agentLibs: AgentLibs;
  agentBundleDir: string;
  startTimeoutMs: number;
  /** The one line saying what isolation sandboxes get. */
  isolation: string;
}

/**
 * Checks the host (root, cgroups), cleans what a crashed service left under
 * `dataDir` (mounts, cgroups) and the empty cgroups of any service that is
 * gone, and assembles the base layer on first use.
 */
export async function openRuntimeHost(options: RuntimeOptions): Promise<RuntimeHost> {
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
  return {
    dataDir,
    log,
    maxSandboxes,
    sandboxesMemoryBytes: host.sandboxesMemoryBytes,
    ptysMax,
    cgroups,
    cgroupPrefix,
    nftTable,
    hostNetwork,
    seccompFile,
    mounts,
    nodeBinary,
    agentLibs,
    agentBundleDir,
    startTimeoutMs,
    isolation,
  };
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
