/**
 * A sandbox's launch through the host spawner: the steps its child takes as
 * host root between the fork and the exec of bwrap (`enter_sandbox` in
 * host-spawner.c), the fields of the `L` request that asks for them, and the
 * error a failed step becomes.
 *
 * @module
 */
import { SandboxIacError } from "../../errors";

/** What the spawner's child does before its exec, in this order. */
export interface HostLaunch {
  /** Named in the error when a step fails. */
  sandboxID: string;
  /**
   * Pid of the namespace holder: it must be a running child of the spawner
   * (holder.ts), so its pid cannot have been reused by another process.
   */
  holderPid: number;
  /** `cgroup.procs` files the child writes its pid to, first of all. */
  cgroupProcsFiles: readonly string[];
  /** Written to its `oom_score_adj`, best effort. */
  oomScoreAdj: number;
  /** Its soft and hard RLIMIT_NOFILE. */
  nofile: number;
  /** The descriptor the holder's user namespace becomes (for `bwrap --userns`). */
  usernsFd: number;
  /** The host uid and gid it drops to (root inside), after entering the holder's mount and network namespaces. */
  idBase: number;
}

/** The launch's fields of an `L` request, after its descriptors (host-spawner.ts has the protocol). */
export function launchFields(launch: HostLaunch): string[] {
  return [
    String(launch.holderPid),
    String(launch.idBase),
    String(launch.nofile),
    String(launch.oomScoreAdj),
    String(launch.usernsFd),
    String(launch.cgroupProcsFiles.length),
    ...launch.cgroupProcsFiles,
  ];
}

/**
 * The steps a launch and a holder share, by their name in an `F` event
 * (host-spawner.c's `step_names`), as the error tells them: dropping from
 * host root to the sandbox's host uid and gid `idBase`, and the parent check.
 */
export const CREDENTIAL_STEPS: Readonly<Record<string, (start: { idBase: number }) => string>> = {
  parent: () =>
    "checking that the host spawner is still its parent (it is not: the service is stopping)",
  groups: () => "clearing its supplementary groups",
  gid: ({ idBase }) => `switching to its host gid ${idBase}`,
  uid: ({ idBase }) => `switching to its host uid ${idBase}`,
  pdeathsig: () => "setting its parent-death signal",
};

/** Each step's name in an `F` event (host-spawner.c's `step_names`), as the error tells it. */
const STEPS: Readonly<Record<string, (l: HostLaunch, index: number) => string>> = {
  ...CREDENTIAL_STEPS,
  fds: () => "giving it its descriptors (the agent's socket, the seccomp filter)",
  holder: (l) =>
    `finding its namespace holder (pid ${l.holderPid}) among the host spawner's running children (it exited)`,
  "ns-user": (l) => `opening its namespace holder's user namespace (/proc/${l.holderPid}/ns/user)`,
  "ns-mnt": (l) => `opening its namespace holder's mount namespace (/proc/${l.holderPid}/ns/mnt)`,
  "ns-net": (l) => `opening its namespace holder's network namespace (/proc/${l.holderPid}/ns/net)`,
  cgroup: (l, i) => `joining its cgroup (writing its pid to ${l.cgroupProcsFiles[i] ?? "?"})`,
  nofile: (l) => `setting its RLIMIT_NOFILE to ${l.nofile}`,
  "setns-mnt": () => "entering its namespace holder's mount namespace",
  "setns-net": () => "entering its namespace holder's network namespace",
  exec: () => "running bwrap",
};

/**
 * The error of a launch that did not start: the step that failed (`step`,
 * with `index` for a cgroup) and why (`errno`, an errno name or the
 * spawner's own failure). Nothing of the launch runs on.
 */
export function launchError(
  operation: string,
  launch: HostLaunch,
  failure: { errno: string; step?: string | undefined; index: number },
): SandboxIacError {
  const step = failure.step
    ? (STEPS[failure.step]?.(launch, failure.index) ?? `step ${failure.step}`)
    : "starting it";
  return new SandboxIacError(
    "internal",
    `the sandbox's launch failed at ${step}: ${failure.errno}`,
    { operation, resourceId: launch.sandboxID },
  );
}
