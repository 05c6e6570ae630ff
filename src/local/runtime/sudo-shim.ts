/**
 * `sudo` in the base layer. E2B's base image gives `user` passwordless sudo;
 * a setuid sudo cannot work here (bubblewrap always sets no-new-privileges),
 * but E2B's boundary is the sandbox, not the user, and root inside is an
 * unprivileged host uid range. So for `user` the shim hands the command to the
 * agent (which runs as root) over its sudo socket: see src/agent/sudo/. As
 * root, sudo is a no-op: the shim skips sudo's options and runs the command.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { AGENT_BUNDLE_IN_SANDBOX, AGENT_NODE_IN_SANDBOX } from "../../wire/sandbox-paths";

/** Where the shim lives, relative to the layer's `/usr`. */
const SHIM_IN_USR = path.join("local", "bin", "sudo");

/** The shim: root runs the command itself (unless it asks for another user or a shell); anyone else asks the agent. */
const sudoShim = (node: string) => `#!/bin/sh
# sandbox-iac: see src/local/runtime/sudo-shim.ts
agent() { exec ${node} ${AGENT_BUNDLE_IN_SANDBOX} --sudo "$@"; }
[ "$(id -u)" = 0 ] || agent "$@"
for a in "$@"; do
  case "$a" in
    --) break ;;
    -u|--user) target=next ;;
    -u*) [ "\${a#-u}" = root ] || agent "$@" ;;
    --user=*) [ "\${a#--user=}" = root ] || agent "$@" ;;
    -*) ;;
    *) [ "$target" = next ] && { [ "$a" = root ] || agent "$@"; target=; continue; }; break ;;
  esac
done
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -u|-g|-C|-D|-h|-p|-r|-t|-T|-U|--user) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -eq 0 ] && exit 0
exec "$@"
`;

/**
 * Writes the shim into a layer's `usr` directory. `node` is how the shim
 * starts the agent's Node (default: the Node binary at its mount point, for
 * layers over the host's `/usr`); `inUsr` is where, relative to `/usr`
 * (default `local/bin/sudo`).
 */
export async function writeSudoShim(
  layerUsrDir: string,
  node: string = AGENT_NODE_IN_SANDBOX,
  inUsr: string = SHIM_IN_USR,
): Promise<void> {
  const file = path.join(layerUsrDir, inUsr);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
  await fs.writeFile(file, sudoShim(node), { mode: 0o755 });
  await fs.chmod(file, 0o755);
}
