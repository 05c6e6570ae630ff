/**
 * The command line that starts one sandbox's agent, once its holder owns the
 * namespaces and its root is mounted (see holder.ts and mounts.ts).
 *
 * `setpriv --pdeathsig` → `sh` (as root: joins the cgroups, sets RLIMIT_NOFILE, opens the holder's
 * user namespace) → `nsenter` into the holder's mount and network namespaces
 * → `setpriv` down to the sandbox's host uid (bubblewrap refuses `--userns`
 * as host root) → `bwrap --userns`, which joins the user namespace as root
 * inside, unshares pid/ipc/uts/cgroup, masks `/proc`, drops capabilities to
 * Docker's set and loads the seccomp filter → the agent, which listens on the
 * socket the service created and passed as descriptor 3.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { AGENT_NODE_FLAGS } from "../agent-launch";
import { AGENT_BUNDLE_IN_SANDBOX, AGENT_NODE_IN_SANDBOX } from "../../wire/sandbox-paths";
import { bootIdArgs } from "./boot-id";
import {
  AGENT_OOM_SCORE_ADJ,
  PROC_MASKED_FILES,
  PROC_READONLY_PATHS,
  SANDBOX_CAPABILITIES,
  SANDBOX_NOFILE,
  SANDBOX_PATH,
} from "./constants";
import { STAGING } from "./mounts";

/** Descriptor numbers the launch chain inherits from the service. */
export const LAUNCH_FDS = { agentListener: 3, seccomp: 4 } as const;
/** Descriptor the launch script opens on the holder's user namespace. */
const USERNS_FD = 5;

/** Everything the launch command depends on. */
export interface LaunchPlan {
  sandboxID: string;
  /** `cgroup.procs` files to join before anything else runs. */
  cgroupProcsFiles: readonly string[];
  /** Pid of the holder owning the sandbox's namespaces. */
  holderPid: number;
  /** Host uid/gid of root inside. */
  idBase: number;
  /** Pid of the process that spawns the chain and dies with the service (the host spawner). */
  parentPid: number;
  /**
   * How Node starts inside (see agent-libs.ts).
   * @default the Node binary at its mount point
   */
  nodeArgv?: readonly string[] | undefined;
}

/** A program, its arguments and the environment to spawn it with. */
export interface LaunchCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
}

// Runs as the spawned process itself (each step execs), so `$$` is the pid that becomes bwrap.
// The chain must die with the service even on kill -9 mid-start, or its bwrap lives on under
// init and keeps the sandbox's namespaces, veth and loop device. Its parent is the host spawner
// (host-spawner.c), which dies with the service and sets the death signal before the exec;
// `setpriv --pdeathsig` sets it too, and a spawner that died before that is seen here as another
// parent. The inner setpriv's uid change clears the signal (the kernel does so on any credential
// change), so it sets it again at once; bwrap's --die-with-parent then keeps it.
const LAUNCH_SCRIPT = [
  "set -e",
  '[ "$PPID" = "$SBX_PARENT_PID" ] || exit 1',
  'for f in $SBX_CGROUP_PROCS; do echo $$ > "$f"; done',
  "# Best effort: lowering it needs CAP_SYS_RESOURCE, which some container hosts withhold.",
  '(echo "$SBX_OOM_SCORE_ADJ" > /proc/self/oom_score_adj) 2>/dev/null || true',
  'ulimit -n "$SBX_NOFILE"',
  `exec ${USERNS_FD}</proc/"$SBX_HOLDER"/ns/user`,
  'exec nsenter -t "$SBX_HOLDER" -m -n -- setpriv --reuid="$SBX_ID_BASE" --regid="$SBX_ID_BASE" --clear-groups --pdeathsig KILL -- bwrap "$@"',
].join("\n");

/** Builds the `sh … nsenter … setpriv … bwrap … agent` command for `plan`. */
export function buildLaunchCommand(plan: LaunchPlan): LaunchCommand {
  const bwrap = [
    "--userns",
    String(USERNS_FD),
    "--uid",
    "0",
    "--gid",
    "0",
    "--seccomp",
    String(LAUNCH_FDS.seccomp),
    // The merged root's mounts are nodev and nosuid: device nodes made with CAP_MKNOD stay unusable.
    "--bind",
    STAGING.root,
    "/",
    "--proc",
    "/proc",
    // bwrap cannot create a missing mount point under /proc; the kernel's config decides which exist.
    ...PROC_MASKED_FILES.filter((f) => existsSync(f)).flatMap((f) => ["--ro-bind", "/dev/null", f]),
    ...PROC_READONLY_PATHS.flatMap((p) => ["--ro-bind-try", p, p]),
    // After the read-only /proc/sys, which would otherwise cover it.
    ...bootIdArgs(),
    "--dev",
    "/dev",
    // The sandbox's own devpts instance (see mounts.ts) over the one bwrap made; /dev/ptmx points into it.
    "--dev-bind",
    STAGING.devpts,
    "/dev/pts",
    "--perms",
    "1777",
    "--tmpfs",
    "/dev/shm",
    // The host's /sys stays hidden: an empty read-only tmpfs.
    "--tmpfs",
    "/sys",
    "--remount-ro",
    "/sys",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--hostname",
    plan.sandboxID,
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    ...SANDBOX_CAPABILITIES.flatMap((cap) => ["--cap-add", cap]),
    "--clearenv",
    "--setenv",
    "PATH",
    SANDBOX_PATH,
    "--setenv",
    "HOME",
    "/root",
    "--setenv",
    "USER",
    "root",
    "--setenv",
    "HOSTNAME",
    plan.sandboxID,
    "--chdir",
    "/",
    "--",
    ...(plan.nodeArgv ?? [AGENT_NODE_IN_SANDBOX]),
    ...AGENT_NODE_FLAGS,
    AGENT_BUNDLE_IN_SANDBOX,
    "--listen-fd",
    String(LAUNCH_FDS.agentListener),
  ];
  return {
    file: "setpriv",
    args: ["--pdeathsig", "KILL", "--", "sh", "-c", LAUNCH_SCRIPT, "sh", ...bwrap],
    env: {
      SBX_PARENT_PID: String(plan.parentPid),
      PATH: process.env["PATH"] ?? SANDBOX_PATH,
      SBX_CGROUP_PROCS: plan.cgroupProcsFiles.join(" "),
      SBX_OOM_SCORE_ADJ: String(AGENT_OOM_SCORE_ADJ),
      SBX_NOFILE: String(SANDBOX_NOFILE),
      SBX_HOLDER: String(plan.holderPid),
      SBX_ID_BASE: String(plan.idBase),
    },
  };
}
