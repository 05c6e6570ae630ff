/**
 * Where the in-sandbox agent lives, inside a sandbox and on the host. Shared by
 * the runtime (which mounts and starts it) and the agent (which listens there).
 *
 * @module
 */
import * as path from "node:path";

/** Read-only mount inside every sandbox holding the Node binary and the agent bundle. */
export const AGENT_MOUNT_DIR = "/.sandbox-iac";
/** The Node binary inside the sandbox (the host's `process.execPath`, bound read-only). */
export const AGENT_NODE_IN_SANDBOX = `${AGENT_MOUNT_DIR}/node`;
/**
 * V8 flags of the agent. A young generation capped at 1 MiB per semi-space
 * (Node's default grows to 16 MiB) keeps an agent that has served many
 * requests near its start size: measured 78 MiB RSS instead of 97 MiB after
 * 200 commands, which is memory every idle sandbox holds, and page tables
 * every command's fork copies (0.5 ms less agent CPU per command).
 */
export const AGENT_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1"];
/** The agent bundle inside the sandbox. */
export const AGENT_BUNDLE_IN_SANDBOX = `${AGENT_MOUNT_DIR}/agent/agent.js`;
/** Directory inside the sandbox (bound from the host) that holds the agent's socket. */
export const AGENT_RUN_DIR_IN_SANDBOX = "/run/sandbox-iac";
/** The agent's Unix socket inside the sandbox. */
export const AGENT_SOCKET_IN_SANDBOX = `${AGENT_RUN_DIR_IN_SANDBOX}/agent.sock`;

/**
 * Host path of the directory holding the bundled agent (`agent.js`), built by
 * `npm run build` (scripts/bundle-agent.js) from `src/agent/main.ts`.
 */
export function agentBundleDirOnHost(): string {
  // dist/local/agent-launch.js -> dist/agent ; src/local/agent-launch.ts -> dist/agent
  const here = __dirname;
  const root =
    path.basename(path.dirname(here)) === "dist" || here.includes(`${path.sep}dist${path.sep}`)
      ? path.resolve(here, "..")
      : path.resolve(here, "..", "..", "dist");
  return path.join(root, "agent");
}
