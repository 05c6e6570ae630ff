/**
 * Picking the host's cgroup flavour: the v2 driver on a unified hierarchy
 * with the cpu, memory and pids controllers, else the v1 one.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import { SandboxIacError } from "../../errors";
import type { CgroupDriver, GroupLimits } from "./cgroups";
import { CGROUP_GROUP } from "./constants";
import { createCgroupV1Driver } from "./cgroups-v1";
import { createCgroupV2Driver } from "./cgroups-v2";

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
