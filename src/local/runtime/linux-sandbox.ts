/**
 * A running sandbox as the runtime holds it once launched (sandbox.ts): the
 * freeze / thaw / stop / stats / network operations of {@link RuntimeSandbox},
 * and the clean-up a stop or a crash runs.
 *
 * @module
 */
import { closeSync } from "node:fs";
import * as fs from "node:fs/promises";
import { SandboxIacError } from "../../errors";
import type { SandboxCgroup } from "./cgroups";
import { SANDBOX_ID_RANGE, STOP_TIMEOUT_MS } from "./constants";
import { diskFigures } from "./disk";
import { assertNetwork, egressRulesOf } from "./egress-rules";
import type { Holder } from "./holder";
import type { HostNetwork } from "./network";
import { disconnectSandbox, setEgressRules } from "./sandbox-network";
import type { SandboxPaths } from "./paths";
import { releaseSlot, type Slot } from "./slots";
import type { NetworkSettings, RuntimeSandbox, SandboxSpec, SandboxStats } from "./types";

const MIB = 1024 * 1024;

/** What a {@link LinuxSandbox} is given by its launch: the parts only the launch can make. */
export interface SandboxHooks {
  /** SIGKILLs the launch chain's process (bwrap). */
  killInit: () => void;
  /** Unmounts the volume bound from `source`; false when the sandbox does not mount it (any more). */
  detach: (source: string) => Promise<boolean>;
  hostNetwork: HostNetwork;
  closeLog: () => Promise<void>;
  onStopped: () => void;
}

/** The runtime's sandbox: {@link RuntimeSandbox} plus what only the runtime calls. */
export class LinuxSandbox implements RuntimeSandbox {
  readonly agentSocket: string;
  readonly address: string;
  private agentDir: number | undefined;
  /** Resolves once the init process exited and the sandbox was cleaned up. */
  readonly exited: Promise<void>;
  private frozen = false;
  /** The freeze under way, if any: a stop waits for it (see doStop). */
  private freezing: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private lastCpu: { usageNs: number; wallNs: bigint } | undefined;

  constructor(
    private readonly spec: SandboxSpec,
    private readonly paths: SandboxPaths,
    private readonly cgroup: SandboxCgroup,
    private readonly slot: Slot,
    private readonly holder: Holder,
    private readonly processExited: Promise<void>,
    private readonly hooks: SandboxHooks,
  ) {
    this.agentSocket = paths.socket;
    this.address = slot.sandboxAddress;
    // A crash cleans up the same way stop() does, so the cgroup never lingers.
    this.exited = processExited
      .then(() => this.stop())
      .catch((err: unknown) => {
        hooks.onStopped();
        throw err;
      });
    this.exited.catch(() => undefined);
  }

  get sandboxID(): string {
    return this.spec.sandboxID;
  }

  get agentProcess(): number | undefined {
    return this.agentDir;
  }

  get hostIds(): { first: number; count: number } {
    return { first: this.slot.idBase, count: SANDBOX_ID_RANGE };
  }

  /** Keeps `dir` (agent-process.ts) as {@link agentProcess} until the sandbox stops; closes it when stopped already. */
  holdAgentProcess(dir: number | undefined): void {
    if (dir === undefined) return;
    if (this.stopping) closeSync(dir);
    else this.agentDir = dir;
  }

  async freeze(): Promise<void> {
    this.assertRunning("runtime.freeze");
    const freezing = this.cgroup.freeze();
    this.freezing = freezing;
    try {
      await freezing;
      this.frozen = true;
    } finally {
      if (this.freezing === freezing) this.freezing = undefined;
    }
  }

  async thaw(): Promise<void> {
    this.assertRunning("runtime.thaw");
    await this.cgroup.thaw();
    this.frozen = false;
  }

  /**
   * Takes the volume bound from host directory `source` away from the
   * sandbox, running or frozen (the unmount happens in the holder's
   * namespace, which no sandbox process needs to run for); false when the
   * sandbox does not mount it. The sandbox then sees the directory under the
   * mount point in its own disk (empty unless its template had files there).
   */
  async detachVolume(source: string): Promise<boolean> {
    if (this.stopping) return false;
    return this.hooks.detach(source);
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    // A freeze under way (a layer capture) would freeze the processes again once killAll thawed
    // them (cgroup v1's loop writes FROZEN until it holds), leaving them unkillable: let it end first.
    const freezing = this.freezing;
    if (freezing) await freezing.catch(() => undefined);
    // A frozen process cannot die; killAll thaws, but the init process is killed first.
    if (this.frozen || freezing) await this.cgroup.thaw().catch(() => undefined);
    this.frozen = false;
    this.hooks.killInit();
    // Closed in the same turn as it is let go: a caller reads it and opens through it synchronously.
    if (this.agentDir !== undefined) closeSync(this.agentDir);
    this.agentDir = undefined;
    await this.cgroup.killAll(STOP_TIMEOUT_MS);
    await Promise.race([
      this.processExited,
      new Promise((r) => setTimeout(r, STOP_TIMEOUT_MS).unref()),
    ]);
    await this.hooks.closeLog();
    this.holder.kill();
    await this.holder.exited;
    await this.cgroup.remove();
    await disconnectSandbox(this.hooks.hostNetwork, this.slot);
    await releaseSlot(this.slot);
    await fs.rm(this.paths.socket, { force: true });
    this.hooks.onStopped();
  }

  async stats(): Promise<SandboxStats> {
    this.assertRunning("runtime.stats");
    const usageNs = await this.cgroup.cpuUsageNs();
    const wallNs = process.hrtime.bigint();
    let cpuUsedPct = 0;
    if (this.lastCpu) {
      const wall = Number(wallNs - this.lastCpu.wallNs);
      if (wall > 0)
        cpuUsedPct = ((usageNs - this.lastCpu.usageNs) / wall / this.spec.cpuCount) * 100;
    }
    this.lastCpu = { usageNs, wallNs };
    const mem = await this.cgroup.memory();
    const disk = await diskFigures(this.holder.pid);
    return {
      timestampUnix: Math.floor(Date.now() / 1000),
      cpuCount: this.spec.cpuCount,
      cpuUsedPct: Math.round(Math.min(100, Math.max(0, cpuUsedPct)) * 100) / 100,
      memUsed: Math.max(0, mem.usage - mem.cache),
      memTotal: this.spec.memoryMB * MIB,
      memCache: mem.cache,
      diskUsed: disk.used,
      diskTotal: disk.total,
    };
  }

  async setNetwork(network: NetworkSettings): Promise<void> {
    this.assertRunning("runtime.setNetwork");
    assertNetwork("runtime.setNetwork", network);
    const allowInternetAccess = network.allowInternetAccess ?? this.spec.allowInternetAccess;
    await setEgressRules(
      this.hooks.hostNetwork,
      this.slot,
      egressRulesOf({ allowInternetAccess, network }),
      this.spec.sandboxID,
    );
  }

  /** Pid of the holder whose mount namespace has the disk mounted (for copying it while frozen). */
  get holderPid(): number {
    return this.holder.pid;
  }

  private assertRunning(operation: string): void {
    if (this.stopping) {
      throw new SandboxIacError("conflict", "the sandbox is stopped; start it again first", {
        operation,
        resourceId: this.spec.sandboxID,
      });
    }
  }
}
