/**
 * The sandbox side of the service port: requests routed to a sandbox are
 * piped to its agent's Unix socket, streaming both ways without buffering;
 * `GET /metrics` is answered here from the runtime's cgroup statistics.
 * Unknown, killed and paused sandboxes answer the edge proxy's 502.
 *
 * @module
 */
import * as http from "node:http";
import { maskedHost } from "../../wire/egress-proxy";
import { ENVD_HEADERS, ENVD_ROUTES } from "../../wire/envd";
import { agentPool } from "../control/agent-pool";
import { CORS_HEADERS } from "../control/cors";
import type { SandboxManager } from "../control/sandboxes/manager";
import type { ReachableSandbox } from "../control/sandboxes/known-sandbox";
import { envdMetricsView } from "../control/sandboxes/metrics";
import { safeEqual } from "../../wire/safe-equal";
import { SandboxIacError } from "../../errors";
import { ScavengeEvery } from "../../wire/scavenge";
import { isDirectStdinCall, serveDirectStdin } from "./direct-stdin";

/** Headers that describe one hop, never forwarded (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** envd's 401 body for a missing or wrong access token (docs/envd.md#authentication-users-and-headers). */
const UNAUTHORIZED_MESSAGE =
  "unauthorized access, please provide a valid access token or method signing if supported";

/**
 * Request bytes relayed to agents (all sandboxes) between the service's
 * scavenges: each 64 KiB read of a client's upload is a fresh ArrayBuffer,
 * which only a scavenge frees young, and the relay allocates too little
 * JavaScript for one to come on its own, so mark-compacts came instead
 * (src/wire/scavenge.ts). With one per 4 MiB, the service's CPU per upload of
 * 10,000 files (44 MiB) went from 0.12-0.17 s to 0.08-0.11 s. Not for answers
 * (downloads): their chunks wait on the client's socket, outlive the
 * scavenge, and the service's CPU per GiB downloaded went up a fifth.
 */
const UPLOAD_SCAVENGE_AFTER_BYTES = 4 * 1024 * 1024;
const uploadScavenges = new ScavengeEvery(UPLOAD_SCAVENGE_AFTER_BYTES);

function stripHopByHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  const connectionListed = String(headers.connection ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || connectionListed.includes(k)) continue;
    out[k] = v;
  }
  return out;
}

/** Writes a JSON body with CORS headers. */
export function sendSandboxJson(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.destroy();
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    ...CORS_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(payload.length),
  });
  res.end(payload);
}

/** The edge proxy's answer for a sandbox that is not running. */
export function sendSandboxNotFound(res: http.ServerResponse, sandboxID: string): void {
  sendSandboxJson(res, 502, {
    sandboxId: sandboxID,
    message: "The sandbox was not found",
    code: 502,
  });
}

/**
 * Serves one request for a running sandbox: `/metrics` locally, everything
 * else through the agent.
 */
export async function serveSandboxRequest(
  manager: SandboxManager,
  target: ReachableSandbox,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const pathname = (req.url ?? "/").split("?")[0];
  if (pathname === ENVD_ROUTES.metrics && req.method === "GET")
    return serveMetrics(manager, target, req, res);
  if (isDirectStdinCall(req, pathname ?? "/"))
    return serveDirectStdin(req, res, {
      manager,
      target,
      scavenges: uploadScavenges,
      relay: (read) => pipeToAgent(manager, target, req, res, read),
      answerCut: () => answerCut(res, target.record.sandboxID),
    });
  pipeToAgent(manager, target, req, res);
}

async function serveMetrics(
  manager: SandboxManager,
  target: ReachableSandbox,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const token = manager.tokenOf(target.record);
  if (token) {
    const given = req.headers[ENVD_HEADERS.accessToken.toLowerCase()];
    if (typeof given !== "string" || !safeEqual(given, token)) {
      return sendSandboxJson(res, 401, { code: 401, message: UNAUTHORIZED_MESSAGE });
    }
  }
  try {
    const stats = await target.processes.stats();
    sendSandboxJson(res, 200, envdMetricsView(stats));
  } catch (err) {
    sendSandboxJson(res, 500, {
      code: 500,
      message: `reading the sandbox's resource usage failed: ${SandboxIacError.from(err, { operation: "sandboxes.metrics" }).reason}`,
    });
  }
}

/**
 * Relays one request to the agent and its answer back. Both messages are
 * parsed and framed again by Node (llhttp) rather than copied as raw bytes:
 * the agent is attacker-controlled, so its bytes reach the client only as the
 * body of the answer to its own request (extra or short bytes break that
 * upstream connection, never the client's framing), and the client's next
 * request, which may be for another sandbox, is never written to this
 * agent's socket (test/local/proxy-relay.test.ts). A raw pipe without any
 * parsing, the floor for any relay in Node, measured only 10-20% less of a
 * relaying process's CPU per byte uploading and 25-35% less downloading
 * (256 MiB, a standalone relay); the rest is the kernel copying each byte in
 * and out, which Node cannot avoid without splice(2).
 */
function pipeToAgent(
  manager: SandboxManager,
  target: ReachableSandbox,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  read: readonly Buffer[] = [],
): void {
  const sandboxID = target.record.sandboxID;
  const upstream = http.request({
    socketPath: target.processes.agentSocket,
    method: req.method,
    path: req.url,
    headers: stripHopByHop(req.headers),
    agent: agentPool(target.processes),
  });
  upstream.on("response", (up) => {
    const headers = { ...stripHopByHop(up.headers), ...CORS_HEADERS };
    res.writeHead(up.statusCode ?? 502, headers);
    // Streams (Connect server-streaming, watch) must reach the client as soon as they start:
    // the headers go out with the first body bytes when the agent sent them together (one
    // write, one read for the client: a command's start event, a unary answer), else alone.
    let bodyStarted = false;
    up.once("data", () => (bodyStarted = true));
    setImmediate(() => {
      if (!bodyStarted && !res.writableEnded && !res.destroyed) res.flushHeaders();
    });
    up.on("error", () => res.destroy());
    up.pipe(res);
  });
  upstream.on("error", () => {
    // Already answered (the sandbox was cut and its 502 sent): nothing left to do.
    if (res.writableEnded) return;
    if (!res.headersSent) sendSandboxNotFound(res, sandboxID);
    else res.destroy();
  });
  const untrack = manager.trackConnection(sandboxID, {
    cut() {
      upstream.destroy();
      answerCut(res, sandboxID);
    },
  });
  req.on("error", () => upstream.destroy());
  res.on("close", () => {
    untrack();
    // The client went away (or the sandbox was killed): end the agent side abruptly too.
    if (!res.writableFinished) upstream.destroy();
  });
  req.on("data", (chunk: Buffer) => uploadScavenges.add(chunk.length));
  // What direct-stdin.ts read of the body before leaving the call to the agent.
  for (const chunk of read) {
    uploadScavenges.add(chunk.length);
    upstream.write(chunk);
  }
  req.pipe(upstream);
}

/**
 * Answers a request whose sandbox was cut (killed, paused) mid-exchange. Not
 * answered yet: the edge proxy's 502, as for any request that reaches a
 * sandbox that is gone. Answering already: abrupt, so a stream reader sees a
 * broken stream, not a clean end (the SDK then probes /health).
 */
function answerCut(res: http.ServerResponse, sandboxID: string): void {
  if (!res.headersSent) sendSandboxNotFound(res, sandboxID);
  else res.destroy();
}

/** The edge proxy's answer for a running sandbox with nothing listening on `port`. */
function sendPortClosed(res: http.ServerResponse, sandboxID: string, port: number): void {
  sendSandboxJson(res, 502, {
    sandboxId: sandboxID,
    message: `The sandbox is running but port ${port} is not open`,
    code: 502,
    port,
  });
}

/**
 * Forwards a request for `port` of a running sandbox (an `E2b-Sandbox-Port`
 * header or a `<port>-<id>.<domain>` Host) to the sandbox's address on its
 * own link: the only way in from outside, as E2B's edge proxy is.
 */
export function servePortRequest(
  target: ReachableSandbox,
  port: number,
  trafficToken: string | undefined,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const sandboxID = target.record.sandboxID;
  if (trafficToken !== undefined) {
    const given = req.headers[ENVD_HEADERS.trafficAccessToken.toLowerCase()];
    if (typeof given !== "string" || !safeEqual(given, trafficToken)) {
      return sendSandboxJson(res, 403, {
        sandboxId: sandboxID,
        message: `The sandbox's ports are not public: send its trafficAccessToken in the ${ENVD_HEADERS.trafficAccessToken} header`,
        code: 403,
      });
    }
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return sendPortClosed(res, sandboxID, port);
  }
  const mask = target.record.network?.maskRequestHost;
  const upstream = http.request({
    host: target.processes.address,
    port,
    method: req.method,
    path: req.url,
    // E2B's maskRequestHost: the service in the sandbox sees this Host, not the sandbox's URL.
    headers: { ...stripHopByHop(req.headers), ...(mask ? { host: maskedHost(mask, port) } : {}) },
    agent: false,
    timeout: PORT_CONNECT_TIMEOUT_MS,
  });
  upstream.on("socket", (s) => s.once("connect", () => upstream.setTimeout(0)));
  upstream.on("timeout", () => upstream.destroy());
  upstream.on("response", (up) => {
    res.writeHead(up.statusCode ?? 502, stripHopByHop(up.headers));
    res.flushHeaders();
    up.on("error", () => res.destroy());
    up.pipe(res);
  });
  upstream.on("error", () => {
    if (res.writableEnded) return;
    if (!res.headersSent) sendPortClosed(res, sandboxID, port);
    else res.destroy();
  });
  req.on("error", () => upstream.destroy());
  res.on("close", () => {
    if (!res.writableFinished) upstream.destroy();
  });
  void target.processes.exited.then(() => upstream.destroy());
  req.pipe(upstream);
}

/** How long connecting to a sandbox port may take (the link is local: refusals are immediate). */
const PORT_CONNECT_TIMEOUT_MS = 5_000;
