/**
 * Permissive CORS on sandbox routes, as envd answers it (docs/envd.md#authentication-users-and-headers):
 * every origin, the usual methods, every request header, Connect headers
 * exposed, preflights cached for 2 hours.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";

const EXPOSED = [
  "Connect-Protocol-Version",
  "Connect-Timeout-Ms",
  "Grpc-Status",
  "Grpc-Message",
  "Grpc-Status-Details-Bin",
  "Location",
  "Cache-Control",
  "X-Content-Type-Options",
  "Content-Encoding",
  "Content-Disposition",
].join(", ");

/** Headers added to every sandbox response. */
export const CORS_HEADERS: Record<string, string> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": EXPOSED,
};

/** True for a CORS preflight (which never carries the routing headers). */
export function isPreflight(req: IncomingMessage): boolean {
  return (
    req.method === "OPTIONS" && typeof req.headers["access-control-request-method"] === "string"
  );
}

/** Answers a preflight with 204. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  const requested = req.headers["access-control-request-headers"];
  res.writeHead(204, {
    ...CORS_HEADERS,
    "Access-Control-Allow-Methods": "HEAD, GET, POST, PUT, PATCH, DELETE",
    "Access-Control-Allow-Headers":
      typeof requested === "string" && requested !== "" ? requested : "*",
    "Access-Control-Max-Age": "7200",
    Vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
  });
  res.end();
}
