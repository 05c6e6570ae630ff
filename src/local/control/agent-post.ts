/**
 * The service-only POSTs to an agent (`/init`, the archive extraction), sent
 * with node:http over the agent's Unix socket rather than through the sandbox
 * client's fetch, on the sandbox's pooled connections the relay uses too
 * (`agent-pool.ts`).
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
import { setImmediate as nextLoopTurn } from "node:timers/promises";
import { fromFetchFailure, fromHttpStatus, type ErrorScope } from "../../client/sandbox/errors";
import { routeUrl } from "../../client/sandbox/http";
import type { HeaderRecord } from "../../client/sandbox/headers";
import { DRAIN_MAX_BYTES } from "../../wire/early-answer";

/** How much of a refusal's body is kept for the error message. */
const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * The most of a stream body written without letting the event loop read the
 * socket. Writes the kernel takes at once complete without a turn of the
 * loop (a 'drain' then comes on the next tick, not from the socket), so a
 * body the agent reads as fast as it comes was sent without the client ever
 * reading: an early answer (a refusal, a full disk) lay unread while the
 * agent drained {@link DRAIN_MAX_BYTES} more and closed, and the client saw
 * only the EPIPE of its next write (`unavailable`: 27 of 600 refused 16 MiB
 * uploads beside a busy loop per core, 0-32 of 100-300 without). A turn of
 * the loop every sixteenth of the drain reads the answer long before the
 * agent closes (0 of 4,200).
 */
const WRITE_BETWEEN_READS_BYTES = DRAIN_MAX_BYTES / 16;

/** One POST to an agent. */
export interface AgentPost {
  /** The agent's Unix socket on the host. */
  socketPath: string;
  /** The sandbox's connection pool (`agent-pool.ts`), shared with the relay. */
  agent: http.Agent;
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
 * own deadline's abort into its `timeout`). A stream body stops being sent
 * once the agent has answered (the rest cannot change the answer), and is
 * destroyed when the exchange ends or fails before its end: nothing more of
 * it is read or sent.
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
      agent: input.agent,
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
      sendBody(input.body, req, () => answered, input.onProgress).catch(failSending);
    }
  });
}

/**
 * Writes `body` into `req` and ends it, stopping (and destroying the body) as
 * soon as `answered()` says the agent has answered. Reads of the socket get a
 * turn of the event loop at least every {@link WRITE_BETWEEN_READS_BYTES}, so
 * an early answer is read before the agent stops draining; `onProgress` is
 * called for each chunk taken. Rejects with the body's error.
 */
async function sendBody(
  body: Readable,
  req: http.ClientRequest,
  answered: () => boolean,
  onProgress: (() => void) | undefined,
): Promise<void> {
  let sinceRead = 0;
  // Iterated, not read(): a tar body is a Minipass stream (no readableEnded; a late 'end'
  // listener is called at once). Leaving early destroys a Node stream (the iterator's return);
  // postToAgent destroys any body the agent refused.
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    if (answered() || req.destroyed) return;
    onProgress?.();
    sinceRead += chunk.length;
    // A 'drain' is no turn of the loop: a write the kernel took at once, but
    // past the socket's 16 KiB mark, says "wait" and drains on the next tick.
    if (!req.write(chunk)) await writable(req);
    if (sinceRead >= WRITE_BETWEEN_READS_BYTES) {
      sinceRead = 0;
      await nextLoopTurn();
    }
  }
  if (!answered() && !req.destroyed) req.end();
}

/** Resolves once `req` takes writes again, has an answer, or is gone. */
function writable(req: http.ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      req.off("drain", done);
      req.off("response", done);
      req.off("close", done);
      resolve();
    };
    req.on("drain", done);
    req.on("response", done);
    req.on("close", done);
  });
}
