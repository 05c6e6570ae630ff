/**
 * Which requests on the shared port are for a sandbox, and which sandbox:
 * the `E2b-Sandbox-Id` / `E2b-Sandbox-Port` headers, a Host of the form
 * `<port>-<sandboxID>.<anything>`, or (for `/files` links made by
 * `downloadUrl()` / `uploadUrl()`, which carry neither) the sandbox whose
 * token validates the URL signature.
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

/** The sandbox a request is addressed to by header or Host, if any. */
export function sandboxAddress(req: IncomingMessage): SandboxAddress | undefined {
  const idHeader = req.headers[ENVD_HEADERS.sandboxID.toLowerCase()];
  if (typeof idHeader === "string" && idHeader !== "") {
    const portHeader = req.headers[ENVD_HEADERS.sandboxPort.toLowerCase()];
    const port =
      typeof portHeader === "string" && /^\d+$/.test(portHeader) ? Number(portHeader) : ENVD_PORT;
    return { sandboxID: idHeader.split("-")[0] ?? idHeader, port };
  }
  const host = (req.headers.host ?? "").toLowerCase();
  const match = SANDBOX_HOST_PATTERN.exec(host);
  if (match) return { sandboxID: match[2], port: Number(match[1]) };
  return undefined;
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
