/**
 * The command line that starts one sandbox.
 *
 * bubblewrap 0.8 cannot mount overlays, and overlayfs refuses `lowerdir=/`
 * with an upper dir on the same filesystem, so the chain is:
 * `unshare -m` (a private mount namespace, so the mounts vanish with the
 * sandbox even after `kill -9` of the service) → one `sh` that joins the
 * cgroups, mounts the root and `/usr` overlays and `exec`s → `bwrap` with the
 * merged root as `/` → the agent.
 *
 * @module
 */
import {
  AGENT_BUNDLE_IN_SANDBOX,
  AGENT_MOUNT_DIR,
  AGENT_NODE_IN_SANDBOX,
  AGENT_RUN_DIR_IN_SANDBOX,
  AGENT_SOCKET_IN_SANDBOX,
} from "../agent-launch";
import { AGENT_OOM_SCORE_ADJ, SANDBOX_CAPABILITIES, SANDBOX_PATH } from "./constants";
import type { LayerPaths, SandboxPaths } from "./paths";
import type { SandboxBind } from "./types";

/** Everything the launch command depends on. */
export interface LaunchPlan {
  sandboxId: string;
  /** Layers from the lowest to the highest. */
  layers: readonly LayerPaths[];
  paths: SandboxPaths;
  /** `cgroup.procs` files to join before anything else runs. */
  cgroupProcsFiles: readonly string[];
  allowInternetAccess: boolean;
  /**
   * Host directories bound read-write (volumes).
   * @default []
   */
  binds?: readonly SandboxBind[] | undefined;
  /** Host path of the Node binary (bound read-only). */
  nodeBinary: string;
  /** Host directory holding `agent.js` (bound read-only). */
  agentBundleDir: string;
}

/** A program, its arguments and the environment to spawn it with. */
export interface LaunchCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
}

// Runs as the spawned process itself (unshare execs sh), so `$$` is the pid that becomes bwrap.
const LAUNCH_SCRIPT = [
  "set -e",
  'for f in $SBX_CGROUP_PROCS; do echo $$ > "$f"; done',
  "# Best effort: lowering it needs CAP_SYS_RESOURCE, which some container hosts withhold.",
  '(echo "$SBX_OOM_SCORE_ADJ" > /proc/self/oom_score_adj) 2>/dev/null || true',
  'mount -t overlay overlay -o "$SBX_ROOT_OPTS" "$SBX_ROOTFS"',
  'mount -t overlay overlay -o "$SBX_USR_OPTS" "$SBX_ROOTFS/usr"',
  'exec bwrap "$@"',
].join("\n");

/** Builds the `unshare … sh … bwrap … agent` command for `plan`. */
export function buildLaunchCommand(plan: LaunchPlan): LaunchCommand {
  const { paths } = plan;
  // overlayfs takes the highest lower layer first; the host /usr is the lowest usr layer.
  const highestFirst = [...plan.layers].reverse();
  const rootOpts = `lowerdir=${highestFirst.map((l) => l.root).join(":")},upperdir=${paths.upperRoot},workdir=${paths.workRoot}`;
  const usrOpts = `lowerdir=${[...highestFirst.map((l) => l.usr), "/usr"].join(":")},upperdir=${paths.upperUsr},workdir=${paths.workUsr}`;

  const bwrap = [
    // --bind (not --dev-bind) makes the root nodev and nosuid: device nodes made with CAP_MKNOD stay unusable.
    "--bind",
    paths.rootfs,
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--perms",
    "1777",
    "--tmpfs",
    "/dev/shm",
    // The host's /sys stays hidden: an empty read-only tmpfs.
    "--tmpfs",
    "/sys",
    "--remount-ro",
    "/sys",
    "--ro-bind",
    plan.nodeBinary,
    AGENT_NODE_IN_SANDBOX,
    "--ro-bind",
    plan.agentBundleDir,
    `${AGENT_MOUNT_DIR}/agent`,
    "--bind",
    paths.run,
    AGENT_RUN_DIR_IN_SANDBOX,
    ...(plan.binds ?? []).flatMap((b) => ["--bind", b.source, b.target]),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(plan.allowInternetAccess ? [] : ["--unshare-net"]),
    "--hostname",
    plan.sandboxId,
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
    plan.sandboxId,
    "--chdir",
    "/",
    "--",
    AGENT_NODE_IN_SANDBOX,
    AGENT_BUNDLE_IN_SANDBOX,
    "--socket",
    AGENT_SOCKET_IN_SANDBOX,
  ];
  return {
    file: "unshare",
    args: ["-m", "--propagation", "private", "sh", "-c", LAUNCH_SCRIPT, "sh", ...bwrap],
    env: {
      PATH: process.env["PATH"] ?? SANDBOX_PATH,
      SBX_CGROUP_PROCS: plan.cgroupProcsFiles.join(" "),
      SBX_OOM_SCORE_ADJ: String(AGENT_OOM_SCORE_ADJ),
      SBX_ROOT_OPTS: rootOpts,
      SBX_USR_OPTS: usrOpts,
      SBX_ROOTFS: paths.rootfs,
    },
  };
}
