/**
 * The small HTTP vocabulary of the local control service: requests, responses,
 * routes, the API error type and zod validation that turns into 400s.
 *
 * The control API is served with plain `node:http`; handlers receive a
 * {@link ControlRequest} and return a {@link ControlResponse}. Any
 * {@link ApiError} thrown by a handler becomes the JSON error body of
 * docs/control-api.md#error-body (`{code, message}`), with `code` equal to the status.
 *
 * @module
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import type { ZodType } from "zod";

/** A parsed control-API request. */
export interface ControlRequest {
  /** The HTTP method, upper case. */
  method: string;
  /** The request path without the query string. */
  path: string;
  /** Values of the route's `:name` segments, URL-decoded. */
  params: Record<string, string>;
  /** The query string. */
  query: URLSearchParams;
  /** The request headers (lower-case names). */
  headers: IncomingHttpHeaders;
  /**
   * Reads and parses the JSON body. Resolves `undefined` when the body is
   * empty; rejects with an {@link ApiError} 400 when it is not JSON or too big.
   */
  json(): Promise<unknown>;
  /** The raw request, for streaming bodies (template file uploads). */
  raw: IncomingMessage;
}

/** What a handler answers. */
export interface ControlResponse {
  /** The HTTP status. */
  status: number;
  /**
   * The body, serialised as JSON.
   * @default undefined: no body at all (e.g. a 204)
   */
  body?: unknown;
  /**
   * Extra response headers.
   * @default {}
   */
  headers?: Record<string, string>;
  /**
   * A body streamed as is (e.g. a volume file), instead of `body`.
   * @default undefined: `body` is sent
   */
  stream?: Readable;
}

/** A route handler. */
export type Handler = (req: ControlRequest) => Promise<ControlResponse>;

/** One control-API route. */
export interface Route {
  /** The HTTP method, upper case. */
  method: string;
  /** The path pattern, e.g. `/templates/:templateID/files/:hash`. */
  pattern: string;
  /** The handler. */
  handler: Handler;
  /**
   * Authentication the route requires.
   * @default "apiKey": the `X-API-Key` header must equal the service key;
   * "apiKeyOrAccessToken" also takes `Authorization: Bearer <access token>`
   */
  auth?: "apiKey" | "apiKeyOrAccessToken" | "none";
}

/**
 * An error answered to the client as `{code: status, message, error_code?}`.
 * Throw it from handlers; anything else thrown becomes a 500.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * Validates `value` with `schema`; on failure throws an {@link ApiError} 400
 * naming the field path and the reason, e.g.
 * `body.cpuCount: Too small: expected number to be >=1, got 0`.
 *
 * @param where the root of the field path in the message (`body`, `query`).
 */
export function parseWith<T>(schema: ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new ApiError(400, `${where}: invalid value`);
  const fieldPath = [where, ...issue.path.map((p) => String(p))].join(".");
  const got = issue.path.reduce<unknown>(
    (acc, key) =>
      acc !== null && typeof acc === "object"
        ? (acc as Record<PropertyKey, unknown>)[key]
        : undefined,
    value,
  );
  throw new ApiError(400, `${fieldPath}: ${issue.message}, got ${shortJson(got)}`);
}

/** Renders a received value for an error message, short. */
function shortJson(value: unknown): string {
  if (value === undefined) return "nothing";
  let s: string;
  try {
    s = JSON.stringify(value) ?? typeof value;
  } catch {
    s = typeof value;
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
