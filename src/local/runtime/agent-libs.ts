/**
 * The agent's Node in sandboxes from container images, independent of the
 * image's libc: the host's Node is dynamically linked against the host's
 * glibc, which an image built on musl (or without `/lib64`) does not have. So
 * the shared libraries Node needs are copied once per service start into
 * `<dataDir>/agent-lib`, bound read-only at `/.sandbox-iac/lib`, and Node is
 * started through that directory's dynamic loader with `--library-path`:
 * nothing of the image is loaded into the agent, and the commands it starts
 * (the image's own programs) do not inherit the path.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { AGENT_MOUNT_DIR, AGENT_NODE_IN_SANDBOX } from "../../wire/sandbox-paths";
import { execHost } from "./exec";

/** Sub-directory of the data dir holding the agent's libraries. */
const AGENT_LIB_DIR = "agent-lib";
/** Where the libraries appear inside a sandbox from an image. */
export const AGENT_LIB_IN_SANDBOX = `${AGENT_MOUNT_DIR}/lib`;

/** The host side of the agent's libraries. */
export interface AgentLibs {
  /** Host directory bound at {@link AGENT_LIB_IN_SANDBOX}. */
  dir: string;
  /**
   * The command line prefix that starts Node inside, e.g.
   * `[/.sandbox-iac/lib/ld-linux-x86-64.so.2, --library-path, /.sandbox-iac/lib, /.sandbox-iac/node]`;
   * just the Node binary when it is statically linked.
   */
  nodeArgv: string[];
}

/** Copies the libraries `ldd` lists for `nodeBinary` into `<dataDir>/agent-lib`. */
export async function prepareAgentLibs(dataDir: string, nodeBinary: string): Promise<AgentLibs> {
  const dir = path.join(dataDir, AGENT_LIB_DIR);
  const { stdout } = await execHost("runtime.agentLibs", "ldd", [nodeBinary]).catch(() => ({
    stdout: "",
  }));
  const libs: Array<[string, string]> = [];
  let interpreter: string | undefined;
  for (const line of stdout.split("\n")) {
    const linked = /^\s*(\S+)\s+=>\s+(\/\S+)/.exec(line);
    if (linked) {
      libs.push([linked[1], linked[2]]);
      continue;
    }
    const interp = /^\s*(\/\S+)\s+\(0x/.exec(line);
    if (interp) {
      interpreter = path.basename(interp[1]);
      libs.push([interpreter, interp[1]]);
    }
  }
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  for (const [name, hostPath] of libs) {
    await fs.copyFile(await fs.realpath(hostPath), path.join(dir, path.basename(name)));
    await fs.chmod(path.join(dir, path.basename(name)), 0o755);
  }
  return {
    dir,
    nodeArgv: interpreter
      ? [
          `${AGENT_LIB_IN_SANDBOX}/${interpreter}`,
          "--library-path",
          AGENT_LIB_IN_SANDBOX,
          AGENT_NODE_IN_SANDBOX,
        ]
      : [AGENT_NODE_IN_SANDBOX],
  };
}
