/**
 * Which requests on the shared port are for a sandbox, and which sandbox:
 * the `E2b-Sandbox-Id` / `E2b-Sandbox-Port` headers, a Host of the form
 * `<port>-<sandboxID>.<domain>` under the service's own domain, or (for
 * `/files` links made by `downloadUrl()` / `uploadUrl()`, which carry
 * neither) the sandbox whose token validates the URL signature.
 *
 * A Host of that shape under another domain is refused rather than routed:
 * a name that merely resolves to the service (DNS rebinding, a stale
 * `E2B_DOMAIN`, a shared host serving several names) must not reach a
 * sandbox's ports as if the service had handed it out.
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import { ENVD_HEADERS, ENVD_PORT, ENVD_ROUTES, FILES_QUERY } from "../../wire/envd";
import type { SandboxManager } from "../control/sandboxes/manager";
import type { ReachableSandbox } from "../control/sandboxes/known-sandbox";
import { filesSignature } from "../../wire/files-signature";
import { SANDBOX_HOST_PATTERN } from "../../wire/ids";
import { safeEqual } from "../../wire/safe-equal";

/** A request addressed to a sandbox. */
export interface SandboxAddress {
  /** The sandbox id as sent (may be unknown or malformed). */
  sandboxID: string;
  /** The port inside the sandbox. */
  port: number;
}

/** A sandbox-shaped Host under a domain this service does not serve. */
interface ForeignSandboxHost {
  /** The Host as sent (shortened when absurdly long). */
  foreignHost: string;
}

/** The longest Host echoed back: a DNS name has at most 253 characters, plus a port. */
const MAX_SHOWN_HOST = 260;

/** The name of `host[:port]`: no port, no root dot (domains and these Hosts are never IPv6 literals). */
function nameOf(host: string): string {
  return host.replace(/:\d*$/, "").replace(/\.$/, "");
}

/**
 * The sandbox a request is addressed to by header, or by a Host
 * `<port>-<sandboxID>.<domain>` where `<domain>` is `domain` (names compared
 * without their ports: a port forward or a reverse proxy may change the
 * port, never the name); a sandbox-shaped Host under any other name is
 * {@link ForeignSandboxHost}; anything else is undefined (the control API's).
 */
export function sandboxAddress(
  req: IncomingMessage,
  domain: string,
): SandboxAddress | ForeignSandboxHost | undefined {
  const idHeader = req.headers[ENVD_HEADERS.sandboxID.toLowerCase()];
  if (typeof idHeader === "string" && idHeader !== "") {
    const portHeader = req.headers[ENVD_HEADERS.sandboxPort.toLowerCase()];
    const port =
      typeof portHeader === "string" && /^\d+$/.test(portHeader) ? Number(portHeader) : ENVD_PORT;
    return { sandboxID: idHeader.split("-")[0] ?? idHeader, port };
  }
  const host = (req.headers.host ?? "").toLowerCase();
  const match = SANDBOX_HOST_PATTERN.exec(host);
  if (!match) return undefined;
  if (nameOf(host.slice(match[0].length)) !== nameOf(domain.toLowerCase()))
    return { foreignHost: host.slice(0, MAX_SHOWN_HOST) };
  return { sandboxID: match[2], port: Number(match[1]) };
}

/**
 * The 421 answer to a {@link ForeignSandboxHost}: the Host, what is served,
 * and how to get there.
 */
export function foreignHostMessage(foreign: ForeignSandboxHost, domain: string): string {
  return (
    `the Host ${JSON.stringify(foreign.foreignHost)} is not under this service's domain ${JSON.stringify(domain)}: ` +
    `sandboxes are served at <port>-<sandboxID>.${domain} (or with the ${ENVD_HEADERS.sandboxID} and ${ENVD_HEADERS.sandboxPort} headers); ` +
    `point the client's E2B_DOMAIN (or its domain option) at ${domain}, or, when clients must use the other name, ` +
    `start the service with --domain set to it`
  );
}

/** True for `GET`/`POST /files` without routing headers (signed or unsigned links). */
export function isUnroutedFilesRequest(req: IncomingMessage): boolean {
  const pathname = (req.url ?? "/").split("?")[0];
  return pathname === ENVD_ROUTES.files && (req.method === "GET" || req.method === "POST");
}

/** The result of resolving an unrouted `/files` request. */
export type FilesResolution =
  | { kind: "found"; target: ReachableSandbox }
  | { kind: "error"; status: 400 | 401 | 502; message: string };

/**
 * Finds the sandbox of a `/files` request without routing headers: by its
 * `X-Access-Token`, by its signature, or the only running sandbox when the
 * request is unsigned.
 */
export function resolveFilesTarget(manager: SandboxManager, req: IncomingMessage): FilesResolution {
  const url = new URL(req.url ?? "/", "http://localhost");
  const running = manager
    .all()
    .map((r) => manager.reachable(r.sandboxID))
    .filter((t): t is ReachableSandbox => t !== undefined);
  const token = req.headers[ENVD_HEADERS.accessToken.toLowerCase()];
  const signature = url.searchParams.get(FILES_QUERY.signature);
  if (typeof token === "string" && token !== "") {
    const found = running.find((t) => {
      const own = manager.tokenOf(t.record);
      return own !== undefined && safeEqual(own, token);
    });
    if (found) return { kind: "found", target: found };
    return {
      kind: "error",
      status: 502,
      message:
        "no running sandbox has this access token; the sandbox may have been killed or paused",
    };
  }
  if (signature) {
    const op = req.method === "POST" ? "write" : "read";
    const filePath = url.searchParams.get(FILES_QUERY.path) ?? "";
    const username = url.searchParams.get(FILES_QUERY.username) ?? "";
    const expiration = url.searchParams.get(FILES_QUERY.signatureExpiration) ?? undefined;
    const found = running.find((t) => {
      const own = manager.tokenOf(t.record);
      return (
        own !== undefined &&
        safeEqual(
          filesSignature({
            path: filePath,
            operation: op,
            user: username,
            accessToken: own,
            expiration,
          }),
          signature,
        )
      );
    });
    if (found) return { kind: "found", target: found };
    // envd would answer a forged or stale signature with 401; without a host
    // to route by, a signature that matches no sandbox is the same failure.
    return {
      kind: "error",
      status: 401,
      message: `no running sandbox matches the signature of this ${op} URL for path ${JSON.stringify(filePath)}; the sandbox may have been killed or paused, or the URL was signed for another path or user`,
    };
  }
  if (running.length === 1) return { kind: "found", target: running[0] };
  if (running.length === 0)
    return {
      kind: "error",
      status: 502,
      message: "no sandbox is running to serve this /files request",
    };
  return {
    kind: "error",
    status: 400,
    message: `${running.length} sandboxes are running and this /files request names none: send the ${ENVD_HEADERS.sandboxID} header or use a signed URL`,
  };
}
