/**
 * One running sandbox: launching it, waiting for its agent, and the
 * freeze / thaw / stop / stats operations of {@link RuntimeSandbox}.
 *
 * @module
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs/promises";
import { SandboxIacError } from "../../errors";
import { openAgentLog } from "./agent-log";
import type { CgroupDriver, SandboxCgroup } from "./cgroups";
import { SANDBOX_PIDS_MAX, STOP_TIMEOUT_MS } from "./constants";
import { bytesAvailable, bytesUsed } from "./disk-usage";
import { waitForHealth } from "./health";
import { buildLaunchCommand } from "./launch";
import { layerPaths, sandboxPaths, type SandboxPaths } from "./paths";
import type { RuntimeSandbox, SandboxSpec, SandboxStats } from "./types";

const MIB = 1024 * 1024;

/** What {@link launchSandbox} needs from the runtime. */
export interface LaunchContext {
  dataDir: string;
  cgroups: CgroupDriver;
  /** Name of the sandbox's cgroup (unique per data dir). */
  cgroupName: string;
  nodeBinary: string;
  agentBundleDir: string;
  startTimeoutMs: number;
  log: (line: string) => void;
  /** Called once the sandbox is stopped and its cgroup removed (the id may start again). */
  onStopped: () => void;
}

interface SandboxHooks {
  /** SIGKILLs the launch chain's process (bwrap). */
  killInit: () => void;
  closeLog: () => Promise<void>;
  onStopped: () => void;
}

/**
 * Prepares the sandbox's directories and cgroup, starts the launch chain and
 * resolves once the agent is healthy. On failure nothing keeps running and the
 * error carries the tail of the sandbox's output.
 */
export async function launchSandbox(
  spec: SandboxSpec,
  ctx: LaunchContext,
): Promise<RuntimeSandbox> {
  const paths = sandboxPaths(ctx.dataDir, spec.sandboxId);
  for (const dir of [
    paths.upperRoot,
    paths.upperUsr,
    paths.workRoot,
    paths.workUsr,
    paths.rootfs,
    paths.run,
  ]) {
    await fs.mkdir(dir, { recursive: true });
  }
  // A socket left by a previous run would make the health probe answer too early or not at all.
  await fs.rm(paths.socket, { force: true });
  const cgroup = await ctx.cgroups.create(ctx.cgroupName, {
    cpuCount: spec.cpuCount,
    memoryBytes: spec.memoryMB * MIB,
    pidsMax: SANDBOX_PIDS_MAX,
  });
  const cmd = buildLaunchCommand({
    sandboxId: spec.sandboxId,
    layers: spec.layers.map((id) => layerPaths(ctx.dataDir, id)),
    paths,
    cgroupProcsFiles: cgroup.procsFiles,
    allowInternetAccess: spec.allowInternetAccess,
    binds: spec.binds,
    nodeBinary: ctx.nodeBinary,
    agentBundleDir: ctx.agentBundleDir,
  });
  const agentLog = openAgentLog(paths.log);
  const child = spawn(cmd.file, cmd.args, { env: cmd.env, stdio: ["ignore", "pipe", "pipe"] });
  agentLog.attach(child.stdout);
  agentLog.attach(child.stderr);
  const processExited = new Promise<void>((resolve) => {
    child.on("exit", () => resolve());
    child.on("error", () => resolve()); // spawn failure: no exit event follows
  });
  const sandbox = new LinuxSandbox(spec, paths, cgroup, processExited, {
    killInit: () => child.kill("SIGKILL"),
    closeLog: () => agentLog.close(),
    onStopped: ctx.onStopped,
  });
  ctx.log(`sandbox ${spec.sandboxId}: launched pid ${child.pid ?? "?"}`);

  const health = await waitForHealth(paths.socket, ctx.startTimeoutMs, processExited);
  if (health !== true) {
    await sandbox.stop();
    const why =
      health === "exited"
        ? "the sandbox exited before its agent answered"
        : `the agent did not answer GET /health within ${ctx.startTimeoutMs} ms`;
    throw new SandboxIacError(
      "unavailable",
      `${why}; sandbox output (${paths.log}):\n${agentLog.tail().trim() || "(none)"}`,
      { operation: "runtime.start", resourceId: spec.sandboxId },
    );
  }
  return sandbox;
}

class LinuxSandbox implements RuntimeSandbox {
  readonly agentSocket: string;
  /** Resolves once the init process exited and the sandbox was cleaned up. */
  readonly exited: Promise<void>;
  private frozen = false;
  private stopping: Promise<void> | undefined;
  private lastCpu: { usageNs: number; wallNs: bigint } | undefined;

  constructor(
    private readonly spec: SandboxSpec,
    private readonly paths: SandboxPaths,
    private readonly cgroup: SandboxCgroup,
    private readonly processExited: Promise<void>,
    private readonly hooks: SandboxHooks,
  ) {
    this.agentSocket = paths.socket;
    // A crash cleans up the same way stop() does, so the cgroup never lingers.
    this.exited = processExited
      .then(() => this.stop())
      .catch((err: unknown) => {
        hooks.onStopped();
        throw err;
      });
    this.exited.catch(() => undefined);
  }

  get sandboxId(): string {
    return this.spec.sandboxId;
  }

  async freeze(): Promise<void> {
    this.assertRunning("runtime.freeze");
    await this.cgroup.freeze();
    this.frozen = true;
  }

  async thaw(): Promise<void> {
    this.assertRunning("runtime.thaw");
    await this.cgroup.thaw();
    this.frozen = false;
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    // A frozen process cannot die; killAll thaws, but the init process is killed first.
    if (this.frozen) await this.cgroup.thaw().catch(() => undefined);
    this.frozen = false;
    this.hooks.killInit();
    await this.cgroup.killAll(STOP_TIMEOUT_MS);
    await Promise.race([
      this.processExited,
      new Promise((r) => setTimeout(r, STOP_TIMEOUT_MS).unref()),
    ]);
    await this.hooks.closeLog();
    await this.cgroup.remove();
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
    const diskUsed = await bytesUsed([this.paths.upperRoot, this.paths.upperUsr]);
    return {
      timestampUnix: Math.floor(Date.now() / 1000),
      cpuCount: this.spec.cpuCount,
      cpuUsedPct: Math.round(Math.min(100, Math.max(0, cpuUsedPct)) * 100) / 100,
      memUsed: Math.max(0, mem.usage - mem.cache),
      memTotal: this.spec.memoryMB * MIB,
      memCache: mem.cache,
      diskUsed,
      // No per-sandbox disk quota: the sandbox may grow into the data dir's free space.
      diskTotal: diskUsed + (await bytesAvailable(this.paths.dir)),
    };
  }

  private assertRunning(operation: string): void {
    if (this.stopping) {
      throw new SandboxIacError("conflict", "the sandbox is stopped; start it again first", {
        operation,
        resourceId: this.spec.sandboxId,
      });
    }
  }
}
