/**
 * `sudo` in the base layer. E2B's base image gives `user` passwordless sudo;
 * a setuid sudo cannot work here (bubblewrap always sets no-new-privileges),
 * and having the agent run commands as root for `user` is left until the
 * isolation work makes root inside harmless. Meanwhile `sudo` is never
 * "command not found": as root it runs the command (sudo is a no-op then),
 * as anyone else it fails and says how to run as root.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";

/** Where the shim lives, relative to the layer's `/usr`. */
const SHIM_IN_USR = path.join("local", "bin", "sudo");

/** The shim: options sudo would take are skipped when already root. */
export const SUDO_SHIM = `#!/bin/sh
# sandbox-iac: see src/local/runtime/sudo-shim.ts
if [ "$(id -u)" = 0 ]; then
  while [ $# -gt 0 ]; do
    case "$1" in
      --) shift; break ;;
      -u|-g|-C|-D|-h|-p|-r|-t|-T|-U) shift 2 ;;
      -u*|-g*|--user=*|--group=*) shift ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  [ $# -eq 0 ] && exit 0
  exec "$@"
fi
echo "sudo: not available in this sandbox: processes cannot gain privileges here. Run the command as root instead: commands.run(cmd, { user: \\"root\\" }) with the SDK, or a RUN step with user root in a template." >&2
exit 1
`;

/** Writes the shim into a layer's `usr` directory. */
export async function writeSudoShim(layerUsrDir: string): Promise<void> {
  const file = path.join(layerUsrDir, SHIM_IN_USR);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
  await fs.writeFile(file, SUDO_SHIM, { mode: 0o755 });
  await fs.chmod(file, 0o755);
}
