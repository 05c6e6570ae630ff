/**
 * Response helpers of the template routes: offset paging with an opaque
 * `X-Next-Token` that is present only when another page exists
 * (docs/control-api.md#list-filters-and-paging), and explicit empty bodies.
 *
 * @module
 */
import { CONTROL_HEADERS } from "../../../wire/control";
import { serviceError } from "../http";

/** One page of `items` and the response headers announcing the next one. */
export function paginate<T>(
  items: T[],
  limit: number,
  nextToken: string | undefined,
): { page: T[]; headers: Record<string, string> } {
  const start = nextToken === undefined ? 0 : decodeToken(nextToken);
  const page = items.slice(start, start + limit);
  const next = start + page.length;
  const headers: Record<string, string> = {};
  if (next < items.length)
    headers[CONTROL_HEADERS.nextToken] = Buffer.from(`o:${next}`).toString("base64url");
  return { page, headers };
}

function decodeToken(token: string): number {
  const m = /^o:(\d{1,9})$/.exec(Buffer.from(token, "base64url").toString("utf8"));
  if (!m)
    throw serviceError(
      "invalid_argument",
      `Invalid next token: ${JSON.stringify(token.slice(0, 40))} is not a token this service issued`,
    );
  return Number(m[1]);
}

/**
 * A response without a body that still says so: openapi-fetch (the SDK's
 * client) parses any 2xx except 204 as JSON unless `Content-Length` is `0`.
 */
export function emptyResponse(status: number): { status: number; headers: Record<string, string> } {
  return { status, headers: { "Content-Length": "0" } };
}
