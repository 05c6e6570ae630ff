/**
 * go-plugin's handshake: the magic cookie that tells a plugin it was started
 * by Terraform, and the one line the plugin prints on stdout to say where it
 * listens. Reference: docs/terraform-provider.md#plugin-handshake.
 *
 * @module
 */

/** The environment variable holding Terraform's magic cookie. */
export const MAGIC_COOKIE_KEY = "TF_PLUGIN_MAGIC_COOKIE";
/** The value Terraform sets (fixed for every Terraform provider). */
export const MAGIC_COOKIE_VALUE =
  "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/** The environment variable holding the client certificate (PEM) for AutoMTLS. */
export const CLIENT_CERT_ENV = "PLUGIN_CLIENT_CERT";
/** Where go-plugin asks for the unix socket to be created, when it does. */
export const SOCKET_DIR_ENV = "PLUGIN_UNIX_SOCKET_DIR";
/** go-plugin's core protocol version. */
const CORE_PROTOCOL_VERSION = 1;
/** The Terraform plugin protocol version served. */
const PLUGIN_PROTOCOL_VERSION = 6;

/** The message printed when the provider is run by hand. */
export const NOT_BY_HAND =
  "This is the sandbox-iac Terraform provider (plugin protocol 6). It is started by Terraform, " +
  "not by hand: install it with `sandbox-iac terraform install` and run `terraform init`.\n";

/** True when the environment carries Terraform's magic cookie. */
export function startedByTerraform(env: NodeJS.ProcessEnv): boolean {
  return env[MAGIC_COOKIE_KEY] === MAGIC_COOKIE_VALUE;
}

/** The handshake line: `1|6|unix|<socket>|grpc|<server certificate, base64 DER without padding>`. */
export function handshakeLine(socketPath: string, derBase64: string): string {
  return [
    CORE_PROTOCOL_VERSION,
    PLUGIN_PROTOCOL_VERSION,
    "unix",
    socketPath,
    "grpc",
    derBase64,
  ].join("|");
}
