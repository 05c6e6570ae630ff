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
/**
 * Read-only directory inside every sandbox holding the service's egress CA
 * (`ca.pem`) and the host's bundle plus that CA (`bundle.pem`).
 */
export const EDGE_TRUST_DIR_IN_SANDBOX = `${AGENT_MOUNT_DIR}/trust`;
/**
 * Variables every sandbox process gets so that common clients trust the
 * egress CA: Node adds `NODE_EXTRA_CA_CERTS` to its roots; OpenSSL (Python's
 * `ssl`, Ruby, `git`), requests and curl replace their store with the bundle.
 */
export const EDGE_TRUST_ENV: Readonly<Record<string, string>> = {
  NODE_EXTRA_CA_CERTS: `${EDGE_TRUST_DIR_IN_SANDBOX}/ca.pem`,
  SSL_CERT_FILE: `${EDGE_TRUST_DIR_IN_SANDBOX}/bundle.pem`,
  REQUESTS_CA_BUNDLE: `${EDGE_TRUST_DIR_IN_SANDBOX}/bundle.pem`,
  CURL_CA_BUNDLE: `${EDGE_TRUST_DIR_IN_SANDBOX}/bundle.pem`,
};
/** Directory inside the sandbox (bound from the host) that holds the agent's socket. */
export const AGENT_RUN_DIR_IN_SANDBOX = "/run/sandbox-iac";
/** The agent's Unix socket inside the sandbox. */
export const AGENT_SOCKET_IN_SANDBOX = `${AGENT_RUN_DIR_IN_SANDBOX}/agent.sock`;
/** Directory of the sudo socket; the agent recreates it at start (root-owned, 0755). */
const SUDO_DIR_IN_SANDBOX = `${AGENT_RUN_DIR_IN_SANDBOX}/sudo`;
/** The sudo socket: owned by `user`, mode 0600, so only `user` (and root) can connect. */
export const SUDO_SOCKET_IN_SANDBOX = `${SUDO_DIR_IN_SANDBOX}/sudo.sock`;
