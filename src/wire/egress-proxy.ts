/**
 * E2B's `network.egressProxy` (a SOCKS5 proxy the sandbox's allowed outbound
 * TCP is tunneled through, RFC 1929 credentials) and `network.maskRequestHost`
 * (the `Host` a request to one of the sandbox's ports arrives with), checked
 * as E2B's API checks them (`ValidateEgressProxy` in e2b-dev/infra
 * `packages/shared/pkg/sandbox-network/byop.go`, the mask check of
 * `sandbox_create.go`), with the same messages. The password is never part
 * of a message.
 *
 * @module
 */
import { isIP } from "node:net";

/** `SandboxEgressProxyConfig`: `address` is `host:port`; a password needs a username. */
export interface EgressProxyConfig {
  address: string;
  username?: string | undefined;
  password?: string | undefined;
}

/** RFC 1929 carries each of the username and the password in one length byte. */
const MAX_CREDENTIAL_BYTES = 255;
/** E2B's placeholder in `maskRequestHost`, replaced by the port the request is for. */
const PORT_PLACEHOLDER = "${PORT}";
/** A DNS name: letters, digits, hyphens, dots (an IPv4 literal also matches). */
const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** `host:port` split as Go's `net.SplitHostPort` does (`[v6]:port` bracketed), or why not. */
function splitHostPort(address: string): { host: string; port: string } | { problem: string } {
  const bracketed = /^\[([^\]]*)\]:([^:]*)$/.exec(address);
  if (bracketed) return { host: bracketed[1], port: bracketed[2] };
  const colon = address.lastIndexOf(":");
  if (colon < 0) return { problem: `address ${address}: missing port in address` };
  const host = address.slice(0, colon);
  if (host.includes(":")) return { problem: `address ${address}: too many colons in address` };
  return { host, port: address.slice(colon + 1) };
}

/**
 * The canonical proxy (host lower-cased, whitespace trimmed), or E2B's
 * message for what is wrong ("Invalid egress proxy config: …" is the 400's
 * text). The host must be an IP literal or a DNS name; resolving it is left
 * to the caller.
 */
export function checkEgressProxy(
  cfg: EgressProxyConfig,
): { proxy: EgressProxyConfig & { host: string; port: number } } | { problem: string } {
  const address = cfg.address.trim();
  if (address === "") return { problem: "egress proxy address must not be empty" };
  const split = splitHostPort(address);
  if ("problem" in split)
    return { problem: `egress proxy address must be in host:port form: ${split.problem}` };
  const host = split.host.trim().toLowerCase();
  if (host === "") return { problem: "egress proxy host must not be empty" };
  const port = /^\d{1,5}$/.test(split.port) ? Number(split.port) : NaN;
  if (!(port >= 1 && port <= 65535))
    return { problem: `egress proxy port "${split.port}" is not a valid 1-65535 value` };
  if (isIP(host) === 0 && !HOST_NAME.test(host))
    return { problem: `egress proxy host "${host}" is neither an IP address nor a DNS name` };
  const username = cfg.username ?? "";
  const password = cfg.password ?? "";
  if (username === "" && password !== "")
    return { problem: "egress proxy password must be empty when username is empty" };
  if (Buffer.byteLength(username) > MAX_CREDENTIAL_BYTES)
    return { problem: `egress proxy username must not exceed ${MAX_CREDENTIAL_BYTES} bytes` };
  if (Buffer.byteLength(password) > MAX_CREDENTIAL_BYTES)
    return { problem: `egress proxy password must not exceed ${MAX_CREDENTIAL_BYTES} bytes` };
  const joined = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  return {
    proxy: {
      address: joined,
      host,
      port,
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
    },
  };
}

/** The proxy as GET shows it: E2B never returns the password. */
export function egressProxyView(cfg: EgressProxyConfig): { address: string; username?: string } {
  return { address: cfg.address, ...(cfg.username ? { username: cfg.username } : {}) };
}

/**
 * E2B's message when `mask` is not a valid `maskRequestHost` (a host, with
 * an optional `:port`, ASCII only; `${PORT}` may stand anywhere), else undefined.
 */
export function maskRequestHostProblem(mask: string): string | undefined {
  const split = splitHostPort(mask);
  const host = "problem" in split ? (mask.includes(":") ? undefined : mask) : split.host;
  if (host === undefined) return `mask request host is not valid: ${mask}`;
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(host))
    return `mask request host '${host}' is not ASCII. Please use ASCII characters only.`;
  // Control characters, spaces and delimiters would split or forge the header.
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f/?#@\\]/.test(mask)) return `mask request host is not valid: ${mask}`;
  return undefined;
}

/** The `Host` a request for `port` arrives with under `mask` (`${PORT}` replaced). */
export function maskedHost(mask: string, port: number): string {
  return mask.split(PORT_PLACEHOLDER).join(String(port));
}
