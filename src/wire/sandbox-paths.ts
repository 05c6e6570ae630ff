/**
 * Paths inside every sandbox that the runtime (which mounts and starts the
 * agent), the agent (which listens and serves sudo there) and the service
 * (which keeps volumes off them) must agree on.
 *
 * @module
 */

/** Read-only mount inside every sandbox holding the Node binary and the agent bundle. */
export const AGENT_MOUNT_DIR = "/.sandbox-iac";
/** The Node binary inside the sandbox (the host's `process.execPath`, bound read-only). */
export const AGENT_NODE_IN_SANDBOX = `${AGENT_MOUNT_DIR}/node`;
/** The agent bundle inside the sandbox. */
export const AGENT_BUNDLE_IN_SANDBOX = `${AGENT_MOUNT_DIR}/agent/agent.js`;
/** Directory inside the sandbox (bound from the host) that holds the agent's socket. */
export const AGENT_RUN_DIR_IN_SANDBOX = "/run/sandbox-iac";
/** The agent's Unix socket inside the sandbox. */
export const AGENT_SOCKET_IN_SANDBOX = `${AGENT_RUN_DIR_IN_SANDBOX}/agent.sock`;
/** Directory of the sudo socket; the agent recreates it at start (root-owned, 0755). */
const SUDO_DIR_IN_SANDBOX = `${AGENT_RUN_DIR_IN_SANDBOX}/sudo`;
/** The sudo socket: owned by `user`, mode 0600, so only `user` (and root) can connect. */
export const SUDO_SOCKET_IN_SANDBOX = `${SUDO_DIR_IN_SANDBOX}/sudo.sock`;
