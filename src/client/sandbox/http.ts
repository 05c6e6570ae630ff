/**
 * Requests to envd's plain HTTP routes (`/files`, `/metrics`, ...) through the
 * injected fetch, with the client's headers, a deadline and error mapping.
 *
 * @internal
 * @module
 */
import { SandboxIacError } from "../../errors";
import type { SandboxContext } from "./context";
import { fromFetchFailure, fromHttpStatus, type ErrorScope } from "./errors";
import { mergeHeaders, type HeaderRecord } from "./headers";

/**
 * What a plain HTTP request needs of a client: its fetch, base URL and
 * headers.
 * @internal
 */
export type HttpTarget = Pick<SandboxContext, "fetch" | "baseUrl" | "headers">;

/** One plain HTTP request. @internal */
export interface HttpRequestInput {
  method: "GET" | "POST";
  /** A route from `ENVD_ROUTES`. */
  route: string;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | undefined>;
  /** Headers on top of the client's. */
  headers?: HeaderRecord;
  /** The body; a web ReadableStream is sent streamed (`duplex: "half"`). */
  body?: RequestInit["body"];
  /** Aborts the request. */
  signal?: AbortSignal | undefined;
  /** Deadline in ms for the whole exchange; 0 means none. */
  timeoutMs: number;
  /** Operation and resource for error messages. */
  scope: ErrorScope;
  /** Statuses that are answers rather than failures (e.g. 502 on /health). */
  acceptStatuses?: readonly number[];
}

/** Builds `<baseUrl><route>?<query>`; the base path is kept so a prefixing proxy works. */
export function routeUrl(
  baseUrl: string,
  route: string,
  query: Record<string, string | undefined> = {},
): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
  const qs = params.toString();
  return `${baseUrl}${route}${qs ? `?${qs}` : ""}`;
}

/** Combines the caller's signal with the deadline. */
function requestSignal(
  signal: AbortSignal | undefined,
  timeoutMs: number,
): AbortSignal | undefined {
  const signals = [signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  if (signals.length <= 1) return signals[0];
  return AbortSignal.any(signals);
}

/**
 * Sends the request and returns the response when its status is 2xx (or
 * accepted); otherwise reads the body and throws the mapped error. The caller
 * owns the returned body.
 */
export async function httpRequest(ctx: HttpTarget, input: HttpRequestInput): Promise<Response> {
  const signal = requestSignal(input.signal, input.timeoutMs);
  const scope = { ...input.scope, signal: input.signal };
  let res: Response;
  try {
    const init: RequestInit & { duplex?: "half" } = {
      method: input.method,
      headers: mergeHeaders(ctx.headers, input.headers),
      signal: signal ?? null,
    };
    if (input.body !== undefined) {
      init.body = input.body;
      // Required by undici for a stream body; harmless for buffers.
      init.duplex = "half";
    }
    res = await ctx.fetch(routeUrl(ctx.baseUrl, input.route, input.query), init);
  } catch (err) {
    throw fromFetchFailure(err, scope);
  }
  if (res.ok || input.acceptStatuses?.includes(res.status)) return res;
  let text = "";
  try {
    text = await res.text();
  } catch {
    // The status alone still says what happened.
  }
  throw fromHttpStatus(res.status, text, scope);
}

/** Reads a JSON body, mapping a body that is not JSON to `contract_violation`. */
export async function readJson<T>(res: Response, scope: ErrorScope): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new SandboxIacError(
      "contract_violation",
      `expected a JSON body from the sandbox ${scope.sandboxID}, got ${JSON.stringify(text.slice(0, 80))}`,
      { operation: scope.operation, resourceId: scope.resourceId, status: res.status, cause: err },
    );
  }
}
