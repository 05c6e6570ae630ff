/**
 * Where the sandbox cgroups of a service started by this test process live:
 * the `sandbox-iac` group below this process's own cgroup, per controller on
 * cgroup v1 (the machine kind's hybrid layout), one directory on v2.
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** True on a pure cgroup v2 host. */
export const onCgroupV2 = fs.existsSync("/sys/fs/cgroup/cgroup.controllers");

/**
 * The directory grouping the sandbox cgroups of a service this process
 * started, in the hierarchy of `controller` (v1) or the unified one (v2).
 */
export function sandboxGroupDir(controller: string): string {
  const own = fs
    .readFileSync("/proc/self/cgroup", "utf8")
    .split("\n")
    .map((l) => l.split(":"))
    .find(([, ctrls]) => (onCgroupV2 ? ctrls === "" : ctrls?.split(",").includes(controller)))?.[2];
  const base = onCgroupV2 ? "/sys/fs/cgroup" : `/sys/fs/cgroup/${controller}`;
  return path.join(base, own ?? "/", "sandbox-iac");
}

/**
 * The cgroup directory of sandbox `id` for `controller` (its name is the
 * service's data-dir prefix, a dash, and the id), or undefined when none exists.
 */
export function sandboxCgroupOf(id: string, controller: string): string | undefined {
  const dir = sandboxGroupDir(controller);
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  const name = names.find((n) => n.endsWith(`-${id}`));
  return name ? path.join(dir, name) : undefined;
}
