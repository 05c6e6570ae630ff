/**
 * Host checks done before the local service starts: it needs Linux, root and
 * bubblewrap. Failing early with how to fix beats a cryptic mount error later.
 *
 * @module
 */
import { accessSync, constants } from "node:fs";
import * as path from "node:path";
import { SandboxIacError } from "../errors";
import { ENV_VARS } from "../wire/control";

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
  if (!which("bwrap")) {
    throw new SandboxIacError(
      "unsupported",
      `the local sandbox service needs bubblewrap, and no bwrap executable is on PATH: install it with \`apt-get install bubblewrap\`, ${REMOTE_HINT}`,
      { operation: OPERATION },
    );
  }
}
