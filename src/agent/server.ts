/**
 * The agent's HTTP/1.1 request handler: the access-token check, then either
 * the Connect adapter (process and filesystem services) or a plain route.
 *
 * @module
 */
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { Filesystem } from "../gen/envd/filesystem/filesystem_pb";
import { Process } from "../gen/envd/process/process_pb";
import { AGENT_INTERNAL_ROUTES, ENVD_HEADERS, ENVD_ROUTES, RPC_MAX_BODY_BYTES } from "../wire/envd";
import { checkSignature, tokenMatches } from "./auth";
import { RPC_PATH_PREFIXES, UNAUTHORIZED_MESSAGE } from "./constants";
import { filesystemService } from "./filesystem/service";
import { WatcherTable } from "./filesystem/watchers";
import { composeFiles } from "./http/compose";
import { drainAfterAnswer, drainWhenAnswered } from "../wire/early-answer";
import { contentTypeOf, isBinaryStdinStream, requestEncoding } from "../wire/rpc-request";
import { extractArchive } from "./http/extract";
import { getFile } from "./http/files-get";
import { postFiles } from "./http/files-post";
import { envs, init } from "./http/init";
import { health, metrics } from "./http/metrics";
import { sendError } from "./http/respond";
import { runRoute, type Route } from "./http/run-route";
import { ProcessRegistry } from "./process/registry";
import { processService } from "./process/service";
import { serveStdinPipe } from "./process/stdin-pipe";
import { serveStdinStream } from "./process/stdin-stream";
import { decodeErrorsAsInvalidArgument } from "./rpc-decode-errors";
import type { AgentState } from "./state";

const ROUTES: Record<string, Route> = {
  [`GET ${ENVD_ROUTES.health}`]: health,
  [`GET ${ENVD_ROUTES.metrics}`]: metrics,
  [`GET ${ENVD_ROUTES.envs}`]: envs,
  [`POST ${ENVD_ROUTES.init}`]: init,
  [`GET ${ENVD_ROUTES.files}`]: getFile,
  [`POST ${ENVD_ROUTES.files}`]: postFiles,
  [`POST ${ENVD_ROUTES.compose}`]: composeFiles,
  [`POST ${AGENT_INTERNAL_ROUTES.extract}`]: extractArchive,
};

/** Routes that never need the token. */
const OPEN_ROUTES = new Set([`GET ${ENVD_ROUTES.health}`, `POST ${ENVD_ROUTES.init}`]);
/** Routes that accept a URL signature instead of the token. */
const SIGNED_ROUTES: Record<string, "read" | "write"> = {
  [`GET ${ENVD_ROUTES.files}`]: "read",
  [`POST ${ENVD_ROUTES.files}`]: "write",
};

/** Content types of the Connect JSON codec, the only one the agent takes (both SDKs use it). */
const RPC_CONTENT_TYPES = new Set(["application/json", "application/connect+json"]);
/** A request refused before the Connect adapter sees it. */
interface Refusal {
  status: number;
  code: string;
  message: string;
}

/** Why an RPC request body cannot be taken, before any of it is read. */
function refuseRpcBody(req: IncomingMessage, pathname: string): Refusal | undefined {
  const type = contentTypeOf(req);
  if (!RPC_CONTENT_TYPES.has(type) && !isBinaryStdinStream(req, pathname)) {
    return {
      status: 415,
      code: "invalid_argument",
      message: `content type '${type}' is not accepted: the agent speaks Connect with the JSON codec (application/json, or application/connect+json for streams)`,
    };
  }
  const compressed = requestEncoding(req);
  if (compressed) {
    return {
      status: 415,
      code: "invalid_argument",
      message: `${compressed.header} '${compressed.encoding}' is not accepted: the agent takes uncompressed Connect requests (both SDKs send them); drop the header`,
    };
  }
  const length = Number(req.headers["content-length"] ?? "0");
  if (length > RPC_MAX_BODY_BYTES) {
    return {
      status: 413,
      code: "resource_exhausted",
      message: `request body of ${length} bytes exceeds the limit of ${RPC_MAX_BODY_BYTES} bytes: send less per call`,
    };
  }
  return undefined;
}

/**
 * Answers a refusal in Connect's JSON error shape; the unread body is drained
 * up to a bound (src/wire/early-answer.ts), so the client reads the answer instead of
 * a reset, and a huge body costs little.
 */
function sendRefusal(res: ServerResponse, r: Refusal): void {
  const body = Buffer.from(JSON.stringify({ code: r.code, message: r.message }));
  res.writeHead(r.status, { "Content-Type": "application/json", "Content-Length": body.length });
  res.end(body);
  drainAfterAnswer(res);
}

/** What {@link createAgentHandler} needs. */
export interface AgentHandlerOptions {
  state: AgentState;
  /** Where failures the caller cannot see are reported. @default console.error */
  log?: (message: string) => void;
}

/** The access check of docs/envd.md#authentication-users-and-headers; returns the 401 message, or undefined when allowed. */
function denied(
  state: AgentState,
  key: string,
  req: IncomingMessage,
  url: URL,
): string | undefined {
  const token = state.settings.accessToken;
  if (token === undefined || OPEN_ROUTES.has(key)) return undefined;
  const header = req.headers[ENVD_HEADERS.accessToken.toLowerCase()];
  const given = typeof header === "string" ? header : undefined;
  const op = SIGNED_ROUTES[key];
  if (op) {
    if (given !== undefined) return tokenMatches(token, given) ? undefined : UNAUTHORIZED_MESSAGE;
    const check = checkSignature(token, url.searchParams, op);
    return check.ok ? undefined : check.message;
  }
  return tokenMatches(token, given) ? undefined : UNAUTHORIZED_MESSAGE;
}

/** Builds the agent's request listener. */
export function createAgentHandler(options: AgentHandlerOptions): RequestListener {
  const { state } = options;
  const log = options.log ?? ((m: string) => console.error(m));
  const registry = new ProcessRegistry();
  const watchers = new WatcherTable();
  const rpc = connectNodeAdapter({
    // A chunked body (no Content-Length to check up front) is still bounded.
    readMaxBytes: RPC_MAX_BODY_BYTES,
    interceptors: [decodeErrorsAsInvalidArgument],
    routes: (router) => {
      router.service(Process, processService(state, registry));
      router.service(Filesystem, filesystemService(state, watchers));
    },
  });

  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://agent");
    const isRpc = RPC_PATH_PREFIXES.some((p) => url.pathname.startsWith(p));
    const key = isRpc ? `RPC ${url.pathname}` : `${req.method ?? "GET"} ${url.pathname}`;
    const refusal = denied(state, key, req, url);
    if (refusal !== undefined) {
      sendError(res, 401, refusal);
      return;
    }
    if (isRpc) {
      const refused = refuseRpcBody(req, url.pathname);
      if (refused) {
        sendRefusal(res, refused);
        return;
      }
      // Answered before its input was read to the end (a StreamInput to a
      // process that has exited): the rest is drained, or the next request
      // the service relays on this connection would never be read.
      drainWhenAnswered(req, res);
      // Bulk stdin may also come as binary protobuf, as envd takes it (src/wire/rpc-request.ts).
      if (req.method === "POST" && isBinaryStdinStream(req, url.pathname))
        serveStdinStream(req, res, { registry, readMaxBytes: RPC_MAX_BODY_BYTES });
      else rpc(req, res);
      return;
    }
    // Beside ROUTES: it needs the process registry, which a route's context does not carry.
    if (key === `GET ${AGENT_INTERNAL_ROUTES.stdinPipe}`) {
      serveStdinPipe(res, url, registry);
      return;
    }
    const route = ROUTES[key];
    if (!route) {
      sendError(res, 404, `no route for ${key}: see the envd interface for the supported routes`);
      return;
    }
    runRoute(route, { req, res, url, state }, key, log);
  };
}
