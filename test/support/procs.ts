/**
 * Processes read from /proc, for tests that check what runs, what it runs
 * under, and that it is gone.
 */
import * as fs from "node:fs";

/** State and parent pid of `pid`, from /proc/<pid>/stat; undefined once it is gone. */
export function statOf(pid: number): { state: string; ppid: number } | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, { encoding: "utf8", flag: "r" });
  } catch {
    return undefined;
  }
  // After the command name in parentheses (which may hold spaces): the state, then the parent pid.
  const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, ppid: Number(ppid) };
}

/** True while `pid` runs (not gone, not a zombie waiting for its parent to reap it). */
export function running(pid: number): boolean {
  const s = statOf(pid);
  return s !== undefined && s.state !== "Z";
}

/** The pids whose parent is `parent`. */
export function childrenOf(parent: number): number[] {
  return fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => statOf(pid)?.ppid === parent);
}
