/**
 * cgroup v1 driver: one directory per controller (cpu, cpuacct, memory, pids,
 * freezer) under `<controller mount><service's cgroup>/sandbox-iac/<name>`.
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

type Controller = "cpu" | "cpuacct" | "memory" | "pids" | "freezer";

/** Builds the v1 driver over the per-controller group directories `groupDirs`, limited by `group`. */
export function createCgroupV1Driver(
  groupDirs: Record<Controller, string>,
  group: GroupLimits,
): CgroupDriver {
  const controllers = Object.keys(groupDirs) as Controller[];
  let prepared: Promise<void> | undefined;
  const prepare = async (): Promise<void> => {
    for (const c of controllers) await fs.mkdir(groupDirs[c], { recursive: true });
    await setMemoryLimit(groupDirs.memory, group.memoryBytes);
    await writeCgroupFile(path.join(groupDirs.pids, "pids.max"), String(group.pidsMax));
  };
  return {
    version: 1,
    async create(name: string, limits: CgroupLimits): Promise<SandboxCgroup> {
      prepared ??= prepare();
      // A failed preparation is tried again by the next create.
      await prepared.catch((err: unknown) => {
        prepared = undefined;
        throw err;
      });
      const dirs = {} as Record<Controller, string>;
      for (const c of controllers) {
        dirs[c] = path.join(groupDirs[c], name);
        await fs.mkdir(dirs[c], { recursive: true });
      }
      await applyLimits(dirs, limits);
      return new CgroupV1(dirs);
    },
    setIdle(name: string, idle: boolean): void {
      setCpuIdle(path.join(groupDirs.cpu, name), idle);
    },
    async removeStale(prefix: string): Promise<void> {
      // Every controller is listed: a service killed inside create() leaves the
      // cgroup in the controllers made so far (freezer, made last, among the missing).
      const names = new Set<string>();
      for (const c of controllers) {
        const entries = await fs.readdir(groupDirs[c]).catch(() => [] as string[]);
        for (const n of entries) if (n.startsWith(prefix)) names.add(n);
      }
      for (const name of names) {
        const dirs = {} as Record<Controller, string>;
        for (const c of controllers) dirs[c] = path.join(groupDirs[c], name);
        const cg = new CgroupV1(dirs);
        await cg.killAll(5_000);
        await cg.remove();
      }
    },
    async list(): Promise<string[]> {
      // Every controller, as above: a half-made cgroup is in some only.
      const names = new Set<string>();
      for (const c of controllers) for (const n of await childCgroups(groupDirs[c])) names.add(n);
      return [...names];
    },
    async removeIfEmpty(name: string): Promise<boolean> {
      // cpu and cpuacct may be one co-mounted hierarchy: the second rmdir finds it gone.
      for (const c of controllers) {
        if (!(await rmdirIfEmpty(path.join(groupDirs[c], name)))) return false;
      }
      return true;
    },
  };
}

async function applyLimits(dirs: Record<Controller, string>, limits: CgroupLimits): Promise<void> {
  await setMemoryLimit(dirs.memory, limits.memoryBytes);
  await writeCgroupFile(path.join(dirs.pids, "pids.max"), String(limits.pidsMax));
  await writeCgroupFile(path.join(dirs.cpu, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
  await writeCgroupFile(
    path.join(dirs.cpu, "cpu.cfs_quota_us"),
    String(Math.round(limits.cpuCount * CPU_PERIOD_US)),
  );
  // Asked and written in one synchronous step: a setIdle() call cannot come in between.
  if (limits.idle) setCpuIdle(dirs.cpu, limits.idle());
}

/** Sets the memory and memory-plus-swap limits of the memory cgroup `mem` to `bytes`. */
async function setMemoryLimit(mem: string, bytes: number): Promise<void> {
  // memsw must stay >= the memory limit, so lift it before lowering the limit on a reused cgroup.
  const memsw = path.join(mem, "memory.memsw.limit_in_bytes");
  const hasMemsw = await fs.access(memsw).then(
    () => true,
    () => false,
  );
  if (hasMemsw) await writeCgroupFile(memsw, "-1");
  await writeCgroupFile(path.join(mem, "memory.limit_in_bytes"), String(bytes));
  // Without this, swap would let a sandbox use more than its memory limit.
  if (hasMemsw) await writeCgroupFile(memsw, String(bytes));
}

class CgroupV1 implements SandboxCgroup {
  readonly procsFiles: readonly string[];

  constructor(private readonly dirs: Record<Controller, string>) {
    // cpu and cpuacct may be one co-mounted hierarchy; writing the pid twice is harmless.
    this.procsFiles = Object.values(dirs).map((d) => path.join(d, "cgroup.procs"));
  }

  async freeze(): Promise<void> {
    const state = path.join(this.dirs.freezer, "freezer.state");
    await writeCgroupFile(state, "FROZEN");
    // The kernel reports FREEZING until every task has stopped.
    const deadline = Date.now() + FREEZE_TIMEOUT_MS;
    for (;;) {
      if ((await readCgroupFile(state)) === "FROZEN") return;
      if (Date.now() > deadline) throw freezeTimeout(this.dirs.freezer);
      await sleep(2);
      await writeCgroupFile(state, "FROZEN");
    }
  }

  async thaw(): Promise<void> {
    await writeCgroupFile(path.join(this.dirs.freezer, "freezer.state"), "THAWED");
  }

  async killAll(timeoutMs: number): Promise<void> {
    const procs = path.join(this.dirs.freezer, "cgroup.procs");
    const deadline = Date.now() + timeoutMs;
    const exists = await fs.access(procs).then(
      () => true,
      () => false,
    );
    if (!exists) return;
    // Freezing first stops a fork bomb from outrunning the kill loop.
    await this.freeze().catch(() => undefined);
    for (const pid of await readPids(procs)) killPid(pid);
    await this.thaw().catch(() => undefined);
    while (Date.now() < deadline) {
      const left = await readPids(procs);
      if (left.length === 0) return;
      for (const pid of left) killPid(pid);
      await sleep(5);
    }
  }

  async remove(): Promise<void> {
    for (const dir of new Set(Object.values(this.dirs))) await rmdirCgroup(dir);
  }

  async cpuUsageNs(): Promise<number> {
    return Number(await readCgroupFile(path.join(this.dirs.cpuacct, "cpuacct.usage")));
  }

  async memory(): Promise<CgroupMemory> {
    const usage = Number(
      await readCgroupFile(path.join(this.dirs.memory, "memory.usage_in_bytes")),
    );
    const stat = parseStatFile(
      await fs.readFile(path.join(this.dirs.memory, "memory.stat"), "utf8"),
    );
    const cache = stat.get("total_cache") ?? stat.get("cache") ?? 0;
    return { usage, cache };
  }
}
