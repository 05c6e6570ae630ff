/**
 * Small helpers for the plain-HTTP routes: JSON answers, envd's error shape
 * `{code, message}`, and bounded body reading.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { CONTENT_TYPES } from "../../wire/envd";
import { readJsonBody } from "../../wire/json-body";
import { SandboxIacError } from "../../errors";
import { drainAfterAnswer } from "../../wire/early-answer";

/** An HTTP failure with envd's JSON error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/**
 * Sends `body` as JSON with `status`; the rest of a request body not read to
 * its end is drained (src/wire/early-answer.ts).
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "Content-Type": CONTENT_TYPES.json, "Content-Length": data.length });
  res.end(data);
  drainAfterAnswer(res);
}

/** Sends envd's error body `{code, message}`. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { code: status, message });
}

/** Reads a JSON body of at most `limit` bytes (`{}` when empty); 400 when it is not JSON, 413 when too big. */
export async function readJson(req: IncomingMessage, limit = 1 << 20): Promise<unknown> {
  try {
    const body = await readJsonBody(req, limit);
    // An empty body is an empty object; a `null` body stays null, for the route to refuse.
    return body === undefined ? {} : body;
  } catch (err) {
    const e = SandboxIacError.from(err, { operation: "request body", code: "invalid_argument" });
    throw new HttpError(e.status ?? 400, e.reason);
  }
}
