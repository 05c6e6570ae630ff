/**
 * Where the in-sandbox agent lives inside every sandbox. Shared by the runtime
 * (which mounts and starts it), the service (which keeps volumes off these
 * paths) and the agent itself (which listens there).
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
