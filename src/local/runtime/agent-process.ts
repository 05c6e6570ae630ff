/**
 * A descriptor of a sandbox's agent's `/proc/<pid>` directory, taken once its
 * agent first answered: before anything of the sandbox's user has run, so
 * the one process in the sandbox's cgroup running the agent's bundle with
 * its listening descriptor is the agent. The service reaches the agent's own
 * descriptors through it (`src/local/proxy/direct-stdin.ts`), never by a pid,
 * which another process could hold by the time it is used: a held
 * `/proc/<pid>` directory stays that process's, and once it has exited
 * every lookup under it fails.
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { AGENT_BUNDLE_IN_SANDBOX } from "../../wire/sandbox-paths";
import { pidsIn } from "./cgroup-files";

/** `file`'s text (latin1), or "" when it cannot be read (a process gone). */
function readOr(file: string): string {
  try {
    return fs.readFileSync(file, "latin1");
  } catch {
    return "";
  }
}

/** The agent's argument that names its listening descriptor (launch.ts). */
const LISTEN_FD_FLAG = "--listen-fd";

/**
 * True when `cmdline` (NUL-separated, as `/proc/<pid>/cmdline` reads) is the
 * agent's server: its bundle and listening descriptor, and not the `bwrap`
 * processes above it, whose arguments end with the agent's command.
 */
function isAgentCommand(cmdline: string): boolean {
  const argv = cmdline.split("\0");
  return (
    path.basename(argv[0] ?? "") !== "bwrap" &&
    argv.includes(AGENT_BUNDLE_IN_SANDBOX) &&
    argv.includes(LISTEN_FD_FLAG)
  );
}

/**
 * Opens `/proc/<agent>` for the sandbox whose cgroup lists its processes in
 * `procsFile`; undefined when not exactly one process there is the agent, or
 * it exited meanwhile (the service then relays every request, as it would
 * anyway). Call it only before the sandbox's user runs anything.
 */
export function openAgentProcess(procsFile: string): number | undefined {
  const found: Array<{ pid: number; cmdline: string }> = [];
  // Read synchronously: a few small procfs files, on every start's path, where
  // waiting on the thread pool's turns cost more than the reads.
  for (const pid of pidsIn(readOr(procsFile))) {
    const cmdline = readOr(`/proc/${pid}/cmdline`);
    if (isAgentCommand(cmdline)) found.push({ pid, cmdline });
  }
  const [agent] = found;
  if (found.length !== 1 || !agent) return undefined;
  let dir: number | undefined;
  try {
    dir = fs.openSync(`/proc/${agent.pid}`, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    // Still the agent: its pid was not reused between the listing and the open.
    if (fs.readFileSync(`/proc/self/fd/${dir}/cmdline`, "latin1") === agent.cmdline) return dir;
  } catch {
    // Exited meanwhile.
  }
  if (dir !== undefined) fs.closeSync(dir);
  return undefined;
}
