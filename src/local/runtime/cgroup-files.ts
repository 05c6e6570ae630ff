/**
 * Small helpers over cgroup filesystem files, shared by the v1 and v2 drivers.
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";

/** Reads a cgroup file, trimmed. */
export async function readCgroupFile(p: string): Promise<string> {
  return (await fs.readFile(p, "utf8")).trim();
}

/** Writes a cgroup file, naming it in the error when the kernel refuses the value. */
export async function writeCgroupFile(p: string, value: string): Promise<void> {
  try {
    await fs.writeFile(p, value);
  } catch (err) {
    throw new SandboxIacError(
      "internal",
      `writing ${JSON.stringify(value)} to ${p} failed: ${String(err)}`,
      {
        operation: "runtime.cgroup",
        cause: err,
      },
    );
  }
}

/**
 * Sets `cpu.idle` of the cgroup whose cpu controller directory is `cpuDir`
 * (Linux 5.15+, cgroup v1's cpu controller and v2 alike): the processes of an
 * idle cgroup run only when no sibling cgroup that is not idle wants the CPU.
 *
 * Synchronous (one small write to cgroupfs, a few microseconds), so that a
 * caller can switch every warm-pool member within the turn of the event loop
 * that claims one. Any failure leaves the cgroup as it was: the cgroup not
 * made yet or already removed (a start under way applies the setting when it
 * makes its cgroup), or a kernel without the file. The setting is a CPU
 * priority, never a reason for a start or a claim to fail.
 */
export function setCpuIdle(cpuDir: string, idle: boolean): void {
  try {
    writeFileSync(path.join(cpuDir, "cpu.idle"), idle ? "1" : "0");
  } catch {
    // See above: absent cgroup or file, nothing to undo.
  }
}

/** Parses `key value` lines of `memory.stat` / `cpu.stat`. */
export function parseStatFile(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined) out.set(k, Number(v));
  }
  return out;
}

/** Lists the pids in a `cgroup.procs` file; an absent cgroup has none. */
export async function readPids(procsFile: string): Promise<number[]> {
  return pidsIn(await fs.readFile(procsFile, "utf8").catch(() => ""));
}

/** The pids a `cgroup.procs` file's `text` lists, one per line. */
export function pidsIn(text: string): number[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map(Number);
}

/** SIGKILLs `pid`, ignoring a process that is already gone. */
export function killPid(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already exited between listing and killing.
  }
}

/** Removes a cgroup directory, retrying while the kernel still reports it busy. */
export async function rmdirCgroup(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EBUSY" || attempt >= 200) {
        throw new SandboxIacError("internal", `removing the cgroup ${dir} failed: ${String(err)}`, {
          operation: "runtime.cgroup",
          cause: err,
        });
      }
      await sleep(10);
    }
  }
}

/**
 * Removes the cgroup directory `dir` if it is empty, in one try: false when
 * the kernel refuses (EBUSY: it holds processes or child cgroups), true when
 * removed or already gone.
 */
export async function rmdirIfEmpty(dir: string): Promise<boolean> {
  try {
    await fs.rmdir(dir);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return true;
    if (code === "EBUSY") return false;
    throw new SandboxIacError("internal", `removing the cgroup ${dir} failed: ${String(err)}`, {
      operation: "runtime.cgroup",
      cause: err,
    });
  }
}

/** The names of the child cgroups of `dir` (its directories; the rest are control files); none when absent. */
export async function childCgroups(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => e.name);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The `timeout` error of a freeze the kernel did not complete in time. */
export function freezeTimeout(dir: string): SandboxIacError {
  return new SandboxIacError(
    "timeout",
    `the cgroup ${dir} did not freeze in time; a task may be stuck in the kernel, retry or stop the sandbox`,
    {
      operation: "runtime.freeze",
    },
  );
}
