/**
 * Reads a JSON request body, for both HTTP interfaces (the control API and the
 * agent's plain envd routes): bounded, and never quoting the body in an error,
 * since a body may carry a secret (an env var, a volume token).
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import { SandboxIacError } from "../errors";

/** Reads the whole of `req` (chunked or not) and parses it; `undefined` for an empty body. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const operation = "request body";
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        throw new SandboxIacError(
          "invalid_argument",
          `the request body is larger than ${maxBytes} bytes; send a smaller JSON body`,
          { operation, status: 413 },
        );
      }
      chunks.push(chunk);
    }
  } catch (err) {
    throw SandboxIacError.from(err, { operation, code: "invalid_argument" });
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text; the body may hold a secret, so it is not passed on.
    throw new SandboxIacError(
      "invalid_argument",
      `the request body is not valid JSON (${size} bytes); send a JSON document with Content-Type application/json`,
      { operation, status: 400 },
    );
  }
}
