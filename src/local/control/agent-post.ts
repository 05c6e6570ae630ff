/**
 * The service-only POSTs to an agent (`/init`, the archive extraction), sent
 * with node:http over the agent's Unix socket rather than through the sandbox
 * client's fetch.
 *
 * Why: `/init` is on every create's path (a warm-pool claim is one `/init`).
 * Through undici's fetch it cost 2.6–7 ms of the service's CPU per call, and
 * 0.4–1 ms through node:http (same agent, same machine, 150 calls each). The
 * errors still go through the client's one mapping (`src/client/sandbox/errors.ts`),
 * so a failure has the same code as it had through fetch.
 *
 * @module
 */
import * as http from "node:http";
import type { Readable } from "node:stream";
import { fromFetchFailure, fromHttpStatus, type ErrorScope } from "../../client/sandbox/errors";
import { routeUrl } from "../../client/sandbox/http";
import type { HeaderRecord } from "../../client/sandbox/headers";

/** How much of a refusal's body is kept for the error message. */
const ERROR_BODY_LIMIT = 64 * 1024;

/** One POST to an agent. */
export interface AgentPost {
  /** The agent's Unix socket on the host. */
  socketPath: string;
  /** A route from `ENVD_ROUTES` or `AGENT_INTERNAL_ROUTES`. */
  route: string;
  /** Query parameters; undefined values are left out. @default none */
  query?: Record<string, string | undefined>;
  headers: HeaderRecord;
  /** A string is sent with its length; a stream is sent chunked. */
  body: string | Readable;
  /** Aborts the exchange (the caller's deadline). @default none */
  signal?: AbortSignal | undefined;
  /** Called for each chunk of a stream body the agent takes. @default none */
  onProgress?: (() => void) | undefined;
  /** Operation and resource for error messages. */
  scope: ErrorScope;
}

/**
 * Sends the POST and resolves once a 2xx answer has been read; rejects with
 * the client's mapped error otherwise (a refusal by its status, an
 * unreachable agent `unavailable`, an abort `canceled`; the caller turns its
 * own deadline's abort into its `timeout`). A stream body is destroyed when
 * the exchange fails before its end: nothing more of it is read or sent.
 */
export function postToAgent(input: AgentPost): Promise<void> {
  const { signal } = input;
  const headers: http.OutgoingHttpHeaders = { ...input.headers };
  if (typeof input.body === "string") headers["Content-Length"] = Buffer.byteLength(input.body);
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let answered = false;
    // A body still flowing once the exchange failed (a refusal mid-upload) is read no further.
    const dropBody = (): void => {
      if (typeof input.body !== "string" && !input.body.readableEnded) input.body.destroy();
    };
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      reject(fromFetchFailure(err, input.scope));
      req.destroy();
      dropBody();
    };
    // Once the answer has come, a failure to send the rest of the body (the
    // agent refused it and closed after draining a bounded part, EPIPE) is
    // not the outcome: the answer is, and it settles at its end.
    const failSending = (err: unknown): void => {
      if (!answered) fail(err);
    };
    const req = http.request({
      socketPath: input.socketPath,
      method: "POST",
      path: routeUrl("", input.route, input.query),
      headers,
      ...(signal ? { signal } : {}),
    });
    req.on("error", failSending);
    req.on("response", (res) => {
      answered = true;
      const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on("data", (chunk: Buffer) => {
        if (ok || kept >= ERROR_BODY_LIMIT) return;
        chunks.push(chunk);
        kept += chunk.length;
      });
      res.on("error", fail);
      res.on("end", () => {
        if (settled) return;
        settled = true;
        // Answered before the whole body was sent (a refusal mid-upload):
        // the connection is out of step, so it is not reused.
        if (!req.writableFinished) req.destroy();
        if (ok) return resolve();
        dropBody();
        const text = Buffer.concat(chunks).toString("utf8").slice(0, ERROR_BODY_LIMIT);
        reject(fromHttpStatus(res.statusCode ?? 0, text, input.scope));
      });
    });
    if (typeof input.body === "string") {
      req.end(input.body);
    } else {
      const body = input.body;
      body.on("error", failSending);
      body.pipe(req);
      if (input.onProgress) body.on("data", input.onProgress);
    }
  });
}
