/**
 * Host commands started through the host spawner (`dist/native/host-spawner`,
 * from host-spawner.c): a small process the service starts once and keeps,
 * which vforks each command (and forks each sandbox's launch). Forking the service itself blocks its main
 * thread while the kernel copies the page tables of its heap and until the
 * child has exec'd: with the warm pool refilling, that was most of the
 * service's busy time (each sandbox start runs half a dozen host commands).
 *
 * A command's stdout and stderr (and stdin when asked) are pipes the spawner
 * makes; the service opens its ends through `/proc/<spawner>/fd/<n>`
 * (src/wire/spawner-protocol.ts, shared with the agent's spawner).
 *
 * Death: the spawner dies with the service (its parent-death signal, and a
 * check that the service is still its parent), and every command it started
 * dies with it (the same signal, set before its exec), so a kill -9 of the
 * service still takes every holder and launch chain with it. A spawner that
 * dies on its own takes its commands with it too: they are reported as
 * killed (`SIGKILL`), and the next command starts a new spawner.
 *
 * The spawner's process and its protocol are host-spawner-process.ts; this
 * file holds the one spawner the service shares and the calls made of it.
 *
 * @module
 */
import { SandboxIacError } from "../../errors";
import { holderError } from "./host-holder";
import { launchError } from "./host-launch";
import {
  HostSpawner,
  SPAWNER_PATH,
  type HostChild,
  type HostSpawnOptions,
} from "./host-spawner-process";

/** What callers of {@link spawnHost} pass and get back, defined beside the process that serves them. */
export type { HostChild, HostFd } from "./host-spawner-process";

let shared: HostSpawner | undefined;

/** The service's spawner, started on first use and again if it went away. */
function hostSpawner(operation: string): HostSpawner {
  if (!shared?.alive) {
    shared = HostSpawner.start();
    if (!shared) {
      throw new SandboxIacError(
        "internal",
        `the service has no host spawner at ${SPAWNER_PATH}: build the package again (npm run build) with a C compiler and the static libc (e.g. Debian's build-essential)`,
        { operation },
      );
    }
  }
  return shared;
}

/** The command line as error messages show it. */
export function commandLine(file: string, args: readonly string[]): string {
  return [file, ...args].join(" ");
}

/**
 * Starts `file` with `args` (no shell; `file` is found on the service's
 * PATH) through the host spawner; rejects with an `internal`
 * {@link SandboxIacError} naming the command (or, for a launch, the sandbox
 * and the step that failed) when it cannot start.
 */
export async function spawnHost(
  operation: string,
  file: string,
  args: readonly string[],
  opts: HostSpawnOptions = {},
): Promise<HostChild> {
  let started = await hostSpawner(operation).spawn(file, args, opts);
  if ("errno" in started && started.spawnerGone) {
    // The spawner died (killed, or out of memory) before it answered, perhaps before this request
    // reached it: once on a new one. Whatever the old one had started died with it (its children's
    // parent-death signal); a launch's holder was its child too, so a launch then fails at finding it.
    started = await hostSpawner(operation).spawn(file, args, opts);
  }
  if ("errno" in started) {
    if (opts.launch) throw launchError(operation, opts.launch, started);
    else if (opts.holder) throw holderError(operation, opts.holder, started);
    throw new SandboxIacError(
      "internal",
      `host command ${commandLine(file, args)} failed: it could not start (${started.errno})`,
      { operation },
    );
  }
  return started;
}

/**
 * The pid of the process that is the parent of every command started by
 * {@link spawnHost} (the spawner, started now if needed).
 */
export function hostSpawnerPid(operation: string): number {
  return hostSpawner(operation).pid;
}
