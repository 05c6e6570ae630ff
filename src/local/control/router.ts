/**
 * Dispatches control-API requests to {@link Route}s: path matching, API-key
 * authentication, JSON body parsing and the JSON error shape of
 * docs/control-api.md#error-body. It never lets a handler failure crash the server.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { SandboxIacError, redact, type ErrorCode } from "../../errors";
import { CONTROL_HEADERS } from "../../wire/control";
import { ApiError, type ControlRequest, type ControlResponse, type Route } from "./http";
import { accessTokenValid, bearerToken } from "./access-tokens";
import { safeEqual } from "./tokens";

/** The body of a 401 for a missing or wrong API key (docs/control-api.md#authentication). */
export const INVALID_API_KEY_MESSAGE =
  "Invalid API key, please visit https://e2b.dev/docs/api-key for more information.";

/** JSON bodies above this size are refused; control bodies are small. */
const MAX_JSON_BYTES = 8 * 1024 * 1024;

const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

interface CompiledRoute {
  route: Route;
  segments: string[];
  /** Static segments count: the more, the more specific (`/sandboxes/metrics` beats `/sandboxes/:id`). */
  staticCount: number;
}

/** A function answering one control request. */
export type ControlDispatcher = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * Builds the dispatcher for `routes`.
 *
 * @param apiKey the service's API key, compared in constant time.
 * @param log receives one line per unexpected (5xx) failure, secrets redacted.
 */
export function createRouter(
  routes: Route[],
  apiKey: string,
  log: (line: string) => void,
): ControlDispatcher {
  const compiled: CompiledRoute[] = routes
    .map((route) => {
      const segments = splitPath(route.pattern);
      return { route, segments, staticCount: segments.filter((s) => !s.startsWith(":")).length };
    })
    .sort((a, b) => b.staticCount - a.staticCount);

  return async (req, res) => {
    let response: ControlResponse;
    try {
      response = await dispatch(compiled, apiKey, req);
    } catch (err) {
      response = errorResponse(err, log, `${req.method ?? "?"} ${(req.url ?? "").split("?")[0]}`);
    }
    writeResponse(res, response);
  };
}

async function dispatch(
  compiled: CompiledRoute[],
  apiKey: string,
  req: IncomingMessage,
): Promise<ControlResponse> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const method = (req.method ?? "GET").toUpperCase();
  const pathSegments = splitPath(url.pathname);
  let pathMatched = false;
  for (const c of compiled) {
    const params = matchSegments(c.segments, pathSegments);
    if (!params) continue;
    pathMatched = true;
    if (c.route.method !== method) continue;
    const auth = c.route.auth ?? "apiKey";
    if (auth !== "none") {
      const given = req.headers[CONTROL_HEADERS.apiKey.toLowerCase()];
      const keyOk = typeof given === "string" && safeEqual(given, apiKey);
      const bearer =
        auth === "apiKeyOrAccessToken" ? bearerToken(req.headers.authorization) : undefined;
      if (!keyOk && !(bearer !== undefined && accessTokenValid(apiKey, bearer)))
        throw new ApiError(401, INVALID_API_KEY_MESSAGE);
    }
    const request: ControlRequest = {
      method,
      path: url.pathname,
      params,
      query: url.searchParams,
      headers: req.headers,
      json: () => readJson(req),
      raw: req,
    };
    return await c.route.handler(request);
  }
  if (pathMatched) throw new ApiError(405, `method ${method} is not allowed on ${url.pathname}`);
  throw new ApiError(404, `no route for ${method} ${url.pathname}`);
}

function splitPath(path: string): string[] {
  return path.split("/").filter((s) => s.length > 0);
}

function matchSegments(pattern: string[], path: string[]): Record<string, string> | undefined {
  if (pattern.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    const s = path[i];
    if (p.startsWith(":")) {
      try {
        params[p.slice(1)] = decodeURIComponent(s);
      } catch {
        return undefined;
      }
    } else if (p !== s) return undefined;
  }
  return params;
}

const jsonCache = new WeakMap<IncomingMessage, Promise<unknown>>();

/** Reads the whole body once (chunked or not) and parses it as JSON. */
function readJson(req: IncomingMessage): Promise<unknown> {
  const cached = jsonCache.get(req);
  if (cached) return cached;
  const p = new Promise<unknown>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_JSON_BYTES) {
        reject(
          new ApiError(
            413,
            `request body is larger than ${MAX_JSON_BYTES} bytes; send a smaller JSON body`,
          ),
        );
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("error", (err) =>
      reject(new ApiError(400, `reading the request body failed: ${err.message}`)),
    );
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      if (text.trim() === "") return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch (err) {
        reject(new ApiError(400, `request body is not valid JSON: ${(err as Error).message}`));
      }
    });
  });
  jsonCache.set(req, p);
  return p;
}

const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  conflict: 409,
  rate_limited: 429,
  unavailable: 503,
  timeout: 504,
};

/** Turns anything thrown by a handler into the JSON error response. */
export function errorResponse(
  err: unknown,
  log: (line: string) => void,
  where: string,
): ControlResponse {
  if (err instanceof ApiError) {
    if (err.status >= 500) log(`${where}: ${redact(err.message)}`);
    return jsonError(err.status, err.message, err.errorCode);
  }
  if (SandboxIacError.is(err)) {
    const status = STATUS_BY_CODE[err.code] ?? 500;
    if (status >= 500) log(`${where}: ${err.message}`);
    return jsonError(status, err.message);
  }
  log(
    `${where}: unexpected failure: ${redact(err instanceof Error ? (err.stack ?? err.message) : String(err))}`,
  );
  return jsonError(
    500,
    `internal error while handling ${where}; see the service log`,
    "internal_server_error",
  );
}

/** The control-API error body `{code, message, error_code?}`. */
export function jsonError(status: number, message: string, errorCode?: string): ControlResponse {
  const body: Record<string, unknown> = { code: status, message: redact(message) };
  if (errorCode) body.error_code = errorCode;
  return { status, body };
}

/** Writes a {@link ControlResponse}; JSON bodies get the charset content type. */
export function writeResponse(res: ServerResponse, response: ControlResponse): void {
  if (res.headersSent || res.destroyed) {
    response.stream?.destroy();
    return;
  }
  const headers: Record<string, string> = { ...(response.headers ?? {}) };
  if (response.stream) {
    const stream = response.stream;
    res.writeHead(response.status, headers);
    // A client going away or a read failure ends the response; the file descriptor is closed either way.
    pipeline(stream, res).catch(() => res.destroy());
    return;
  }
  let payload: Buffer | undefined;
  if (response.body !== undefined) {
    if (typeof response.body === "string" && headers["Content-Type"])
      payload = Buffer.from(response.body);
    else {
      payload = Buffer.from(JSON.stringify(response.body));
      headers["Content-Type"] = JSON_CONTENT_TYPE;
    }
    headers["Content-Length"] = String(payload.length);
  } else if (response.status !== 204 && response.status !== 304) {
    // An empty body must say so: a chunked empty body breaks JSON clients (openapi-fetch).
    headers["Content-Length"] = "0";
  }
  res.writeHead(response.status, headers);
  res.end(payload);
}
