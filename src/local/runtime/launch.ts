/**
 * The command that starts one sandbox's agent, once its holder owns the
 * namespaces and its root is mounted (see holder.ts and mounts.ts).
 *
 * The host spawner's child, as host root, joins the sandbox's cgroups, sets
 * its RLIMIT_NOFILE, opens the holder's user namespace, enters the holder's
 * mount and network namespaces and drops to the sandbox's host uid
 * (bubblewrap refuses `--userns` as host root): see host-launch.ts. It then
 * execs `bwrap --userns`, which joins the user namespace as root inside,
 * unshares pid/ipc/uts/cgroup, masks `/proc`, drops capabilities to Docker's
 * set and loads the seccomp filter → the agent, which listens on the socket
 * the service created and passed as descriptor 3.
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
import type { HostLaunch } from "./host-launch";
import { STAGING } from "./mounts";

/** Descriptor numbers the launch inherits from the service. */
export const LAUNCH_FDS = { agentListener: 3, seccomp: 4 } as const;
/** Descriptor the spawner's child opens on the holder's user namespace. */
const USERNS_FD = 5;

/** Everything the launch command depends on. */
export interface LaunchPlan {
  sandboxID: string;
  /** `cgroup.procs` files to join before anything else runs. */
  cgroupProcsFiles: readonly string[];
  /** Pid of the holder owning the sandbox's namespaces (a running child of the host spawner). */
  holderPid: number;
  /** Host uid/gid of root inside. */
  idBase: number;
  /**
   * How Node starts inside (see agent-libs.ts).
   * @default the Node binary at its mount point
   */
  nodeArgv?: readonly string[] | undefined;
}

/** A program, its arguments and environment, and the steps the spawner's child takes before its exec. */
export interface LaunchCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  launch: HostLaunch;
}

/**
 * Builds the `bwrap … agent` command for `plan`. It must die with the service
 * on a kill -9 at any moment, or its bwrap lives on under init and keeps the
 * sandbox's namespaces, veth and loop device: the spawner's child takes the parent-death signal
 * before anything else and again after its uid change (the kernel clears it
 * on any credential change), checking each time that its parent is still
 * the spawner (which dies with the service). bwrap then runs as the init of
 * a pid namespace the spawner's child started, so its death takes every
 * process of the sandbox with it (host-spawner.c); its --die-with-parent
 * alone did not cover its own child before that child's setup ended.
 */
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
    file: "bwrap",
    args: bwrap,
    env: { PATH: process.env["PATH"] ?? SANDBOX_PATH },
    launch: {
      sandboxID: plan.sandboxID,
      holderPid: plan.holderPid,
      cgroupProcsFiles: plan.cgroupProcsFiles,
      oomScoreAdj: AGENT_OOM_SCORE_ADJ,
      nofile: SANDBOX_NOFILE,
      usernsFd: USERNS_FD,
      idBase: plan.idBase,
    },
  };
}
