/**
 * Small helpers for the plain-HTTP routes: JSON answers, envd's error shape
 * `{code, message}`, and bounded body reading.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { CONTENT_TYPES } from "../../wire/envd";
import { errnoReport } from "../../wire/errno";

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

/** Sends `body` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "Content-Type": CONTENT_TYPES.json, "Content-Length": data.length });
  res.end(data);
}

/** Sends envd's error body `{code, message}`. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { code: status, message });
}

/** Reads a JSON body of at most `limit` bytes; 400 when it is not JSON. */
export async function readJson(req: IncomingMessage, limit = 1 << 20): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit)
      throw new HttpError(413, `request body exceeds ${limit} bytes: send a smaller body`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "request body must be valid JSON");
  }
}

/** An {@link HttpError} naming `what` and the errno's reason; 500 only for unknown errors. */
export function httpFsError(err: unknown, what: string): HttpError {
  if (err instanceof HttpError) return err;
  const report = errnoReport(err);
  if (report) return new HttpError(report.status, `${what}: ${report.reason}`);
  return new HttpError(500, `${what}: ${(err as Error)?.message ?? String(err)}`);
}
