/**
 * cgroup v2 driver: `/sys/fs/cgroup/sandbox-iac/<name>` on a pure unified
 * hierarchy, with the cpu, memory and pids controllers delegated down.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { CPU_PERIOD_US, FREEZE_TIMEOUT_MS } from "./constants";
import {
  childCgroups,
  freezeTimeout,
  killPid,
  parseStatFile,
  readCgroupFile,
  readPids,
  rmdirCgroup,
  rmdirIfEmpty,
  setCpuIdle,
  sleep,
  writeCgroupFile,
} from "./cgroup-files";
import type {
  CgroupDriver,
  CgroupLimits,
  CgroupMemory,
  GroupLimits,
  SandboxCgroup,
} from "./cgroups";

const CONTROLLERS = "+cpu +memory +pids";

/** Builds the v2 driver over the group directory `groupDir` (a child of the root cgroup), limited by `group`. */
export function createCgroupV2Driver(groupDir: string, group: GroupLimits): CgroupDriver {
  let prepared = false;
  async function prepare(): Promise<void> {
    if (prepared) return;
    // Controllers must be enabled at every level between the root and the sandbox cgroups.
    await writeCgroupFile(path.join(path.dirname(groupDir), "cgroup.subtree_control"), CONTROLLERS);
    await fs.mkdir(groupDir, { recursive: true });
    await writeCgroupFile(path.join(groupDir, "cgroup.subtree_control"), CONTROLLERS);
    await writeCgroupFile(path.join(groupDir, "memory.max"), String(group.memoryBytes));
    const swapMax = path.join(groupDir, "memory.swap.max");
    if (await exists(swapMax)) await writeCgroupFile(swapMax, "0");
    await writeCgroupFile(path.join(groupDir, "pids.max"), String(group.pidsMax));
    prepared = true;
  }
  return {
    version: 2,
    async create(name: string, limits: CgroupLimits): Promise<SandboxCgroup> {
      await prepare();
      const dir = path.join(groupDir, name);
      await fs.mkdir(dir, { recursive: true });
      await writeCgroupFile(path.join(dir, "memory.max"), String(limits.memoryBytes));
      const swapMax = path.join(dir, "memory.swap.max");
      if (await exists(swapMax)) await writeCgroupFile(swapMax, "0");
      // Kill only the process that ran out of memory, not the whole sandbox (the agent lives there too).
      const oomGroup = path.join(dir, "memory.oom.group");
      if (await exists(oomGroup)) await writeCgroupFile(oomGroup, "0");
      await writeCgroupFile(path.join(dir, "pids.max"), String(limits.pidsMax));
      await writeCgroupFile(
        path.join(dir, "cpu.max"),
        `${Math.round(limits.cpuCount * CPU_PERIOD_US)} ${CPU_PERIOD_US}`,
      );
      // Asked and written in one synchronous step: a setIdle() call cannot come in between.
      if (limits.idle) setCpuIdle(dir, limits.idle());
      return new CgroupV2(dir);
    },
    setIdle(name: string, idle: boolean): void {
      setCpuIdle(path.join(groupDir, name), idle);
    },
    async removeStale(prefix: string): Promise<void> {
      const names = await fs.readdir(groupDir).catch(() => [] as string[]);
      for (const name of names.filter((n) => n.startsWith(prefix))) {
        const cg = new CgroupV2(path.join(groupDir, name));
        await cg.killAll(5_000);
        await cg.remove();
      }
    },
    list: () => childCgroups(groupDir),
    removeIfEmpty: (name: string) => rmdirIfEmpty(path.join(groupDir, name)),
  };
}

class CgroupV2 implements SandboxCgroup {
  readonly procsFiles: readonly string[];

  constructor(private readonly dir: string) {
    this.procsFiles = [path.join(dir, "cgroup.procs")];
  }

  async freeze(): Promise<void> {
    await writeCgroupFile(path.join(this.dir, "cgroup.freeze"), "1");
    const deadline = Date.now() + FREEZE_TIMEOUT_MS;
    for (;;) {
      if (Date.now() > deadline) throw freezeTimeout(this.dir);
      const events = parseStatFile(await fs.readFile(path.join(this.dir, "cgroup.events"), "utf8"));
      if (events.get("frozen") === 1) return;
      await sleep(2);
    }
  }

  async thaw(): Promise<void> {
    await writeCgroupFile(path.join(this.dir, "cgroup.freeze"), "0");
  }

  async killAll(timeoutMs: number): Promise<void> {
    if (!(await exists(this.dir))) return;
    const deadline = Date.now() + timeoutMs;
    const kill = path.join(this.dir, "cgroup.kill");
    if (await exists(kill)) {
      await writeCgroupFile(kill, "1");
    } else {
      await this.freeze().catch(() => undefined);
      for (const pid of await readPids(this.procsFiles[0])) killPid(pid);
    }
    await this.thaw().catch(() => undefined);
    while (Date.now() < deadline) {
      const left = await readPids(this.procsFiles[0]);
      if (left.length === 0) return;
      for (const pid of left) killPid(pid);
      await sleep(5);
    }
  }

  async remove(): Promise<void> {
    await rmdirCgroup(this.dir);
  }

  async cpuUsageNs(): Promise<number> {
    const stat = parseStatFile(await fs.readFile(path.join(this.dir, "cpu.stat"), "utf8"));
    return (stat.get("usage_usec") ?? 0) * 1000;
  }

  async memory(): Promise<CgroupMemory> {
    const usage = Number(await readCgroupFile(path.join(this.dir, "memory.current")));
    const stat = parseStatFile(await fs.readFile(path.join(this.dir, "memory.stat"), "utf8"));
    return { usage, cache: stat.get("file") ?? 0 };
  }
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
