/**
 * Per-sandbox cgroups on cgroup v1 (one hierarchy per controller) and on a
 * pure cgroup v2 host, behind one interface. The runtime picks the flavour at
 * startup with {@link detectCgroups}.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import { SandboxIacError } from "../../errors";
import { CGROUP_GROUP } from "./constants";
import { createCgroupV1Driver } from "./cgroups-v1";
import { createCgroupV2Driver } from "./cgroups-v2";

/** Limits applied to a sandbox cgroup before anything runs in it. */
export interface CgroupLimits {
  /** CPU cores (CFS quota of `cpuCount` periods per period). */
  cpuCount: number;
  /** Memory (and memory plus swap) limit in bytes. */
  memoryBytes: number;
  /** Process and thread limit. */
  pidsMax: number;
}

/** Limits of the cgroup grouping every sandbox, so that all of them together leave the host headroom. */
export interface GroupLimits {
  /** Memory (and memory plus swap) limit in bytes. */
  memoryBytes: number;
  /** Process and thread limit. */
  pidsMax: number;
}

/** Memory figures of a cgroup, in bytes. */
export interface CgroupMemory {
  /** Everything charged, page cache included. */
  usage: number;
  /** Page cache charged to the cgroup. */
  cache: number;
}

/** The cgroup (one per controller on v1) of one sandbox. */
export interface SandboxCgroup {
  /** `cgroup.procs` files the launcher writes its pid into before exec'ing the sandbox. */
  readonly procsFiles: readonly string[];
  /** Freezes every process and resolves once the kernel reports them frozen. */
  freeze(): Promise<void>;
  /** Thaws the cgroup. */
  thaw(): Promise<void>;
  /** SIGKILLs every process, thawing first, and resolves once the cgroup is empty or the deadline passes. */
  killAll(timeoutMs: number): Promise<void>;
  /** Removes the cgroup directories; they must be empty. */
  remove(): Promise<void>;
  /** CPU time consumed so far, in nanoseconds. */
  cpuUsageNs(): Promise<number>;
  /** Current memory figures. */
  memory(): Promise<CgroupMemory>;
}

/** Creates and finds sandbox cgroups of one flavour. */
export interface CgroupDriver {
  /** 1 for the legacy per-controller hierarchies, 2 for the unified hierarchy. */
  readonly version: 1 | 2;
  /** Creates (or reuses) the cgroup `name` with `limits` applied. */
  create(name: string, limits: CgroupLimits): Promise<SandboxCgroup>;
  /** Kills and removes every cgroup whose name starts with `prefix` (left over by a crashed service). */
  removeStale(prefix: string): Promise<void>;
}

const CGROUP_ROOT = "/sys/fs/cgroup";

/**
 * Detects the host's cgroup flavour. The driver applies `group` to the
 * cgroup grouping every sandbox (shared by the services of one host: each
 * writes the same figures) before it creates the first sandbox cgroup.
 * A host whose `/sys/fs/cgroup` is the
 * unified hierarchy with the cpu, memory and pids controllers uses v2;
 * otherwise the v1 controller hierarchies must be mounted.
 */
export async function detectCgroups(group: GroupLimits): Promise<CgroupDriver> {
  const v2Controllers = await fs
    .readFile(`${CGROUP_ROOT}/cgroup.controllers`, "utf8")
    .catch(() => undefined);
  if (v2Controllers !== undefined) {
    const have = new Set(v2Controllers.trim().split(/\s+/));
    const missing = ["cpu", "memory", "pids"].filter((c) => !have.has(c));
    if (missing.length > 0)
      throw unsupportedHost(`cgroup v2 lacks the controllers ${missing.join(", ")}`);
    return createCgroupV2Driver(`${CGROUP_ROOT}/${CGROUP_GROUP}`, group);
  }
  const ownPaths = await readOwnCgroupPaths();
  const needed = ["cpu", "cpuacct", "memory", "pids", "freezer"];
  const dirs: Record<string, string> = {};
  for (const ctrl of needed) {
    const own = ownPaths.get(ctrl);
    if (own === undefined || !(await isDir(`${CGROUP_ROOT}/${ctrl}`))) {
      throw unsupportedHost(
        `the cgroup v1 controller ${ctrl} is not mounted at ${CGROUP_ROOT}/${ctrl}`,
      );
    }
    // Nesting under the service's own cgroup keeps sandboxes inside whatever limits the service runs under.
    dirs[ctrl] = `${CGROUP_ROOT}/${ctrl}${own === "/" ? "" : own}/${CGROUP_GROUP}`;
  }
  return createCgroupV1Driver(dirs, group);
}

/** Maps each v1 controller to the cgroup path of the current process (from /proc/self/cgroup). */
async function readOwnCgroupPaths(): Promise<Map<string, string>> {
  const text = await fs.readFile("/proc/self/cgroup", "utf8");
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [, ctrls, p] = line.split(":");
    if (!ctrls || p === undefined) continue;
    for (const c of ctrls.split(",")) out.set(c, p);
  }
  return out;
}

function unsupportedHost(reason: string): SandboxIacError {
  return new SandboxIacError(
    "unsupported",
    `${reason}; the local sandbox runtime needs cgroup v1 (cpu, cpuacct, memory, pids, freezer) or cgroup v2 (cpu, memory, pids) and must run as root`,
    { operation: "runtime.create" },
  );
}

async function isDir(p: string): Promise<boolean> {
  return fs.stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
