/**
 * Dispatches control-API requests to {@link Route}s: path matching, API-key
 * authentication, JSON body parsing and the JSON error shape of
 * docs/control-api.md#error-body. It never lets a handler failure crash the server.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { SandboxIacError, redact } from "../../errors";
import { CONTROL_HEADERS } from "../../wire/control";
import { readJsonBody } from "../../wire/json-body";
import { safeEqual } from "../../wire/safe-equal";
import {
  failureAnswer,
  serviceError,
  type ControlRequest,
  type ControlResponse,
  type Route,
} from "./http";
import { accessTokenValid, bearerToken } from "./access-tokens";

/** The body of a 401 for a missing or wrong API key (docs/control-api.md#authentication). */
const INVALID_API_KEY_MESSAGE =
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
    writeResponse(req, res, response);
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
        throw serviceError("unauthenticated", INVALID_API_KEY_MESSAGE);
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
  if (pathMatched)
    throw serviceError("unsupported", `method ${method} is not allowed on ${url.pathname}`, {
      status: 405,
    });
  throw serviceError("not_found", `no route for ${method} ${url.pathname}`);
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

/** Reads the whole body once and parses it as JSON; the error never quotes the body. */
function readJson(req: IncomingMessage): Promise<unknown> {
  const cached = jsonCache.get(req);
  if (cached) return cached;
  const p = readJsonBody(req, MAX_JSON_BYTES).catch((err: unknown) => {
    const e = SandboxIacError.from(err, { operation: "request body" });
    throw serviceError(e.code, e.reason, { status: e.status, cause: err });
  });
  jsonCache.set(req, p);
  return p;
}

/**
 * Turns anything thrown by a handler into the JSON error response: a
 * {@link SandboxIacError} gets its code's status (or the status it carries),
 * anything else is a 500 whose details go to the log only.
 */
function errorResponse(err: unknown, log: (line: string) => void, where: string): ControlResponse {
  if (SandboxIacError.is(err)) {
    const { status, message } = failureAnswer(err);
    if (status >= 500) log(`${where}: ${message}`);
    return jsonError(status, message);
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
function jsonError(status: number, message: string, errorCode?: string): ControlResponse {
  const body: Record<string, unknown> = { code: status, message: redact(message) };
  if (errorCode) body.error_code = errorCode;
  return { status, body };
}

/**
 * Writes a {@link ControlResponse}; JSON bodies get the charset content type.
 *
 * An answer given before the request's body was read to its end (a volume
 * full mid-upload, a body too large) closes the connection: the client may
 * still be sending, or may stop sending short of its Content-Length, and a
 * next request on the same connection would be read as the rest of that body
 * and never answered. Closing is what HTTP/1.1 servers do instead of reading
 * a body they do not want (Go's net/http does the same).
 */
function writeResponse(req: IncomingMessage, res: ServerResponse, response: ControlResponse): void {
  if (res.headersSent || res.destroyed) {
    response.stream?.destroy();
    return;
  }
  const headers: Record<string, string> = { ...(response.headers ?? {}) };
  if (!req.complete) headers.Connection = "close";
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
