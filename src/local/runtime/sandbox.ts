/**
 * Launching one sandbox: its disk, namespaces, network, cgroup and mounts,
 * the launch chain, and the wait for its agent. What runs then is a
 * {@link LinuxSandbox} (linux-sandbox.ts).
 *
 * @module
 */
import * as fs from "node:fs/promises";
import { SandboxIacError } from "../../errors";
import {
  AGENT_MOUNT_DIR,
  AGENT_NODE_IN_SANDBOX,
  EDGE_TRUST_DIR_IN_SANDBOX,
} from "../../wire/sandbox-paths";
import { openAgentLog } from "./agent-log";
import { openAgentProcess } from "./agent-process";
import type { CgroupDriver, SandboxCgroup } from "./cgroups";
import { AGENT_LIB_IN_SANDBOX, type AgentLibs } from "./agent-libs";
import { BASE_LAYER_ID, DEFAULT_DISK_SIZE_MB, SANDBOX_PIDS_MAX, START_LIMIT_MS } from "./constants";
import { ensureDisk, migrateOldUpper } from "./disk";
import { waitForHealth } from "./health";
import { writeBootId } from "./boot-id";
import { startHolder, type Holder } from "./holder";
import { spawnHost, type HostChild, type HostFd } from "./host-spawner";
import { buildLaunchCommand, LAUNCH_FDS } from "./launch";
import type { MountedRoot, MountHelper } from "./mounts";
import type { HostNetwork } from "./network";
import { connectSandbox, disconnectSandbox } from "./sandbox-network";
import { layerPaths, sandboxPaths } from "./paths";
import { claimSlot, releaseSlot, type Slot } from "./slots";
import { egressRulesOf } from "./egress-rules";
import { LinuxSandbox } from "./linux-sandbox";
import type { RuntimeSandbox, SandboxSpec } from "./types";

const MIB = 1024 * 1024;

/** What {@link launchSandbox} needs from the runtime. */
export interface LaunchContext {
  dataDir: string;
  cgroups: CgroupDriver;
  /** Name of the sandbox's cgroup (unique per data dir). */
  cgroupName: string;
  /** Whether the sandbox is in the background now (`SandboxRuntime.setBackground`). */
  inBackground: () => boolean;
  /**
   * Resolves once the sandbox is out of the background (at once when it is not
   * in it; at most 100 ms later), with the ms waited: a start
   * waits there between its host phases (background-set.ts).
   */
  whenForeground: () => Promise<number>;
  nodeBinary: string;
  agentBundleDir: string;
  /** The agent's own libraries, for sandboxes from container images. */
  agentLibs: AgentLibs;
  /** The compiled seccomp filter. */
  seccompFile: string;
  /** The runtime's nftables table and DNS resolvers. */
  hostNetwork: HostNetwork;
  /** Builds root filesystems in holders' mount namespaces. */
  mounts: MountHelper;
  /** PTYs each sandbox may open at once. */
  ptysMax: number;
  startTimeoutMs: number;
  log: (line: string) => void;
  /** Called once the sandbox is stopped and its cgroup removed (the id may start again). */
  onStopped: () => void;
}

/**
 * Prepares the sandbox's disk, namespaces, network and cgroup, starts the
 * launch chain and resolves once the agent is healthy. On failure nothing
 * keeps running and the error carries the tail of the sandbox's output.
 */
export async function launchSandbox(
  spec: SandboxSpec,
  ctx: LaunchContext,
): Promise<RuntimeSandbox> {
  const paths = sandboxPaths(ctx.dataDir, spec.sandboxID);
  // Stacks that start from a container image have neither the host's /usr nor its libc underneath.
  const fromImage = spec.layers[0] !== BASE_LAYER_ID;
  const t0 = performance.now();
  const phases: string[] = [];
  const phase = (name: string) => phases.push(`${name} ${(performance.now() - t0).toFixed(0)}`);
  // Each host phase begins only with the sandbox out of the background (a warm-pool member
  // steps aside while a claimed sandbox's create and first command run); "foreground" marks
  // where a start waited for it.
  const foreground = async () => {
    if ((await ctx.whenForeground()) > 0) phase("foreground");
  };
  await foreground();
  await fs.mkdir(paths.dir, { recursive: true, mode: 0o700 });
  // The disk is made while the namespaces are created; both are needed before the mounts.
  const diskReady = (async () => {
    if (await ensureDisk(paths.disk, spec.diskSizeMB ?? DEFAULT_DISK_SIZE_MB)) {
      if (await migrateOldUpper(paths.dir, paths.disk))
        ctx.log(`sandbox ${spec.sandboxID}: moved its writable layer into its new disk image`);
    }
    phase("disk");
  })();
  diskReady.catch(() => undefined);
  let slot: Slot;
  try {
    slot = await claimSlot(spec.sandboxID);
  } catch (err) {
    await diskReady.catch(() => undefined);
    throw err;
  }
  let holder: Holder | undefined;
  let cgroup: SandboxCgroup | undefined;
  // Volume source → its bind's mount id in the holder's namespace (for detachVolume).
  const volumeMounts = new Map<string, number>();
  try {
    holder = await startHolder(slot.idBase, spec.sandboxID);
    const holderPid = holder.pid;
    phase("namespaces");
    await diskReady;
    await foreground();
    const rules = egressRulesOf(spec);
    const layers = spec.layers
      .map((id) => layerPaths(ctx.dataDir, id))
      .reverse()
      .map((l) => [l.root, l.usr] as const);
    let mounted: MountedRoot;
    [, mounted, cgroup] = await Promise.all([
      connectSandbox(ctx.hostNetwork, slot, holder.pid, rules, spec.sandboxID),
      // Every launch is a boot: a new boot id, staged in the tmpfs the mount makes
      // (a thaw does not come through here).
      ctx.mounts
        .mount({
          holderPid: holder.pid,
          image: paths.disk,
          layers,
          hostUsr: !fromImage,
          binds: [
            [ctx.nodeBinary, AGENT_NODE_IN_SANDBOX],
            [ctx.agentBundleDir, `${AGENT_MOUNT_DIR}/agent`],
            // The egress edge's CA, which every sandbox trusts (see edge-ca.ts).
            [ctx.hostNetwork.trustDir, EDGE_TRUST_DIR_IN_SANDBOX],
            ...(fromImage ? [[ctx.agentLibs.dir, AGENT_LIB_IN_SANDBOX] as const] : []),
          ],
          volumes: (spec.binds ?? []).map((b) => [b.source, b.target] as const),
          ptysMax: ctx.ptysMax,
        })
        .then(async (m) => {
          await writeBootId(holderPid);
          return m;
        }),
      ctx.cgroups.create(ctx.cgroupName, {
        cpuCount: spec.cpuCount,
        memoryBytes: spec.memoryMB * MIB,
        pidsMax: SANDBOX_PIDS_MAX,
        idle: ctx.inBackground,
      }),
    ]);
    (spec.binds ?? []).forEach((b, i) => {
      const id = mounted.volumeMountIds[i];
      if (id !== undefined) volumeMounts.set(b.source, id);
    });
    phase("mounts+network+cgroup");
  } catch (err) {
    await diskReady.catch(() => undefined);
    holder?.kill();
    await holder?.exited;
    await cgroup?.remove().catch(() => undefined);
    await disconnectSandbox(ctx.hostNetwork, slot);
    await releaseSlot(slot);
    throw err;
  }
  // The spawner makes the agent's listening socket (the agent alone holds it then; the service
  // only connects to it) and opens the seccomp filter, as descriptors 3 and 4.
  const fds: HostFd[] = [];
  fds[LAUNCH_FDS.agentListener - 3] = { listen: paths.socket };
  fds[LAUNCH_FDS.seccomp - 3] = { read: ctx.seccompFile };
  let child: HostChild;
  await foreground();
  // The agent's cold start is "agent" minus this (bench/floors.js reads both): from the request
  // to start the launch, so its steps before bwrap count too.
  phase("spawn");
  try {
    const cmd = buildLaunchCommand({
      sandboxID: spec.sandboxID,
      cgroupProcsFiles: cgroup.procsFiles,
      holderPid: holder.pid,
      idBase: slot.idBase,
      ...(fromImage ? { nodeArgv: ctx.agentLibs.nodeArgv } : {}),
    });
    child = await spawnHost("runtime.start", cmd.file, cmd.args, {
      env: cmd.env,
      fds,
      launch: cmd.launch,
    });
  } catch (err) {
    holder.kill();
    await holder.exited;
    await cgroup.remove().catch(() => undefined);
    await disconnectSandbox(ctx.hostNetwork, slot);
    await releaseSlot(slot);
    throw err;
  }
  phase("bwrap");
  const agentLog = openAgentLog(paths.log);
  agentLog.attach(child.stdout);
  agentLog.attach(child.stderr);
  const processExited = child.exited.then(() => undefined);
  const sandbox = new LinuxSandbox(spec, paths, cgroup, slot, holder, processExited, {
    killInit: () => child.kill("SIGKILL"),
    detach: async (source) => {
      const id = volumeMounts.get(source);
      if (id === undefined || holder === undefined) return false;
      volumeMounts.delete(source);
      return ctx.mounts.detach(holder.pid, id);
    },
    hostNetwork: ctx.hostNetwork,
    closeLog: () => agentLog.close(),
    onStopped: ctx.onStopped,
  });
  const health = await waitForHealth(paths.socket, {
    stallMs: ctx.startTimeoutMs,
    limitMs: Math.max(START_LIMIT_MS, ctx.startTimeoutMs),
    exited: processExited,
    cpuUsageNs: () => cgroup.cpuUsageNs(),
  });
  phase("agent");
  if (health === true) sandbox.holdAgentProcess(openAgentProcess(cgroup.procsFiles[0] ?? ""));
  // CPU time of the whole launch (the spawner's child from joining the cgroup, bwrap, the agent)
  // until it answered:
  // the cold start's own cost, which the machine's load does not stretch (bench/floors.js reads it).
  const launchCpuMs = (await cgroup.cpuUsageNs().catch(() => NaN)) / 1e6;
  ctx.log(
    `sandbox ${spec.sandboxID}: pid ${child.pid}, host uid ${slot.idBase}, ${slot.sandboxAddress}, ms since start: ${phases.join(", ")}; launch CPU ms ${launchCpuMs.toFixed(1)}`,
  );
  if (health !== true) {
    await sandbox.stop();
    const why = {
      exited: "the sandbox exited before its agent answered",
      stalled: `the agent did not answer GET /health and its sandbox used no CPU for ${ctx.startTimeoutMs} ms`,
      deadline: `the agent did not answer GET /health within ${Math.max(START_LIMIT_MS, ctx.startTimeoutMs)} ms, though its sandbox kept using CPU`,
    }[health];
    throw new SandboxIacError(
      "unavailable",
      `${why}; sandbox output (${paths.log}):\n${agentLog.tail().trim() || "(none)"}`,
      { operation: "runtime.start", resourceId: spec.sandboxID },
    );
  }
  return sandbox;
}
