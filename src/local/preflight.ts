/**
 * Host checks done before the local service starts: Linux, root, the programs
 * and kernel features the isolation needs. A missing one stops the service
 * with a message naming the package or feature: there is no silent fallback
 * to weaker isolation. Failing early beats a cryptic mount error later.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { SandboxIacError } from "../errors";
import { ENV_VARS } from "../wire/control";
import { SYSTEM_PYTHON } from "./runtime/constants";

const OPERATION = "local.start";
const REMOTE_HINT = `or point ${ENV_VARS.apiUrl} at a remote E2B-compatible service instead of starting the local one`;

/** The absolute path of `name` on `PATH`, if executable. */
function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Throws a `SandboxIacError("unsupported")` naming what is missing and how to fix it. */
export function assertHostSupported(): void {
  if (process.platform !== "linux") {
    throw new SandboxIacError(
      "unsupported",
      `the local sandbox service needs Linux (namespaces, overlayfs, cgroups), this is ${process.platform}: run it in a Linux VM or container, ${REMOTE_HINT}`,
      { operation: OPERATION },
    );
  }
  if (process.getuid?.() !== 0) {
    throw new SandboxIacError(
      "unsupported",
      `the local sandbox service must run as root (overlay mounts, cgroups), running as uid ${String(process.getuid?.())}: run it with sudo or as root, ${REMOTE_HINT}`,
      { operation: OPERATION },
    );
  }
  for (const [program, pkg] of REQUIRED_PROGRAMS) {
    if (!which(program)) {
      throw new SandboxIacError(
        "unsupported",
        `the local sandbox service needs ${program} (Debian package ${pkg}), and no ${program} executable is on PATH: install it with \`apt-get install ${pkg}\`, ${REMOTE_HINT}`,
        { operation: OPERATION },
      );
    }
  }
  const seccomp = spawnSync(SYSTEM_PYTHON, ["-I", "-c", "import seccomp"], { stdio: "ignore" });
  if (seccomp.status !== 0) {
    throw new SandboxIacError(
      "unsupported",
      `the local sandbox service compiles its seccomp filter with libseccomp's Python binding, and ${SYSTEM_PYTHON} cannot import seccomp: install it with \`apt-get install python3-seccomp\`, ${REMOTE_HINT}`,
      { operation: OPERATION },
    );
  }
  for (const [file, feature, fix] of KERNEL_FEATURES) {
    if (!existsSync(file)) {
      throw new SandboxIacError(
        "unsupported",
        `the local sandbox service needs ${feature}, and ${file} is missing: ${fix}, ${REMOTE_HINT}`,
        { operation: OPERATION },
      );
    }
  }
  const maxUserNs = Number(readFileSync("/proc/sys/user/max_user_namespaces", "utf8").trim());
  if (!(maxUserNs > 0)) {
    throw new SandboxIacError(
      "unsupported",
      `the local sandbox service gives every sandbox a user namespace, and user.max_user_namespaces is ${maxUserNs}: raise it (sysctl user.max_user_namespaces=15000), ${REMOTE_HINT}`,
      { operation: OPERATION },
    );
  }
}

/** Programs the runtime runs, with the Debian package that has each. */
const REQUIRED_PROGRAMS: ReadonlyArray<readonly [string, string]> = [
  ["bwrap", "bubblewrap"],
  ["nft", "nftables"],
  ["ip", "iproute2"],
  ["mkfs.ext4", "e2fsprogs"],
  ["setpriv", "util-linux"],
  ["nsenter", "util-linux"],
  ["unshare", "util-linux"],
  ["flock", "util-linux"],
  ["mount", "mount"],
];

/** Kernel features the runtime relies on: a file that exists when each is there. */
const KERNEL_FEATURES: ReadonlyArray<readonly [string, string, string]> = [
  ["/proc/self/ns/user", "user namespaces (CONFIG_USER_NS)", "use a kernel built with them"],
  ["/proc/self/ns/net", "network namespaces (CONFIG_NET_NS)", "use a kernel built with them"],
  [
    "/dev/loop-control",
    "loop devices (a disk image per sandbox)",
    "load the loop module (modprobe loop)",
  ],
  ["/sys/module/overlay", "overlayfs", "load the overlay module (modprobe overlay)"],
];
