/**
 * The small HTTP vocabulary of the local control service: requests, responses,
 * routes, the service's errors and zod validation that turns into
 * `invalid_argument`.
 *
 * The control API is served with plain `node:http`; handlers receive a
 * {@link ControlRequest} and return a {@link ControlResponse}. Handlers and
 * the domain code under them throw {@link SandboxIacError}s with a code
 * (see {@link serviceError}); the router answers the code's status from
 * `src/wire/control-status.ts` in the JSON error body of docs/control-api.md#error-body.
 *
 * @module
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import type { ZodType } from "zod";
import { describeValue, SandboxIacError, type ErrorCode } from "../../errors";
import { statusForCode } from "../../wire/control-status";

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
   * empty; rejects with `invalid_argument` when it is not JSON or too big.
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
type Handler = (req: ControlRequest) => Promise<ControlResponse>;

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
 * The operation of the errors the service's handlers raise about the request
 * they serve: the router answers their reason alone (the client names the
 * operation itself), and the full message of any other {@link SandboxIacError}.
 */
const CONTROL_API_OPERATION = "control API";

/** Options of {@link serviceError}. */
export interface ServiceErrorOptions {
  /**
   * The status to answer when it is not the code's usual one (413 for a body
   * too large, 405 for a wrong method, 507 for a full disk).
   * @default the code's status in `src/wire/control-status.ts`
   */
  status?: number | undefined;
  /** The sandbox, template or volume the request was about. @default none */
  resourceId?: string | undefined;
  /** The failure that led to this one. @default none */
  cause?: unknown;
}

/**
 * A refusal of the request being served, e.g.
 * `throw serviceError("not_found", "sandbox x not found")`: the router answers
 * the code's status with `message` as the body's message.
 */
export function serviceError(
  code: ErrorCode,
  message: string,
  options: ServiceErrorOptions = {},
): SandboxIacError {
  return new SandboxIacError(code, message, { operation: CONTROL_API_OPERATION, ...options });
}

/**
 * The status and message the service answers a {@link SandboxIacError} with:
 * the status it carries or its code's; its reason when the service raised it
 * about the request (see {@link CONTROL_API_OPERATION}), its whole message otherwise.
 */
export function failureAnswer(err: SandboxIacError): { status: number; message: string } {
  return {
    status: err.status ?? statusForCode(err.code),
    message: err.operation === CONTROL_API_OPERATION ? err.reason : err.message,
  };
}

/**
 * Validates `value` with `schema`; on failure throws `invalid_argument` naming the field path and the reason, e.g.
 * `body.cpuCount: Too small: expected number to be >=1, got 0`.
 *
 * @param where the root of the field path in the message (`body`, `query`).
 */
export function parseWith<T>(schema: ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw serviceError("invalid_argument", `${where}: invalid value`);
  const fieldPath = [where, ...issue.path.map((p) => String(p))].join(".");
  const got = issue.path.reduce<unknown>(
    (acc, key) =>
      acc !== null && typeof acc === "object"
        ? (acc as Record<PropertyKey, unknown>)[key]
        : undefined,
    value,
  );
  throw serviceError(
    "invalid_argument",
    `${fieldPath}: ${issue.message}, got ${describeValue(got)}`,
  );
}
