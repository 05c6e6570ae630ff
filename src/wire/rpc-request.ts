/**
 * How an RPC request to the agent is told apart before its body is read: its
 * content type, its encodings, and whether it is the one binary call, bulk
 * `StreamInput`. The agent's handler (src/agent/server.ts) refuses or routes
 * by these; the service's direct stdin (src/local/proxy/direct-stdin.ts)
 * takes by them the calls it writes itself.
 *
 * @module
 */
import type { IncomingMessage } from "node:http";

/** The path of `process.Process/StreamInput`. */
const STDIN_STREAM_PATH = "/process.Process/StreamInput";
/**
 * Bulk stdin's binary content type. In JSON a stream's bytes are base64,
 * encoded and decoded in JavaScript at several seconds of CPU per 50 MB on
 * each side (bench/provisioner.js).
 */
const BINARY_STREAM_CONTENT_TYPE = "application/connect+proto";
/** The headers that may name a request's compression. */
const ENCODING_HEADERS = ["content-encoding", "connect-content-encoding"] as const;

/** The content type of a request, without parameters, lower-cased. */
export function contentTypeOf(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
}

/** True for binary `StreamInput`: the one RPC taken in binary. */
export function isBinaryStdinStream(req: IncomingMessage, pathname: string): boolean {
  return pathname === STDIN_STREAM_PATH && contentTypeOf(req) === BINARY_STREAM_CONTENT_TYPE;
}

/** The first compression a request names (a header other than `identity`), or undefined. */
export function requestEncoding(
  req: IncomingMessage,
): { header: string; encoding: string } | undefined {
  for (const header of ENCODING_HEADERS) {
    const encoding = String(req.headers[header] ?? "identity")
      .trim()
      .toLowerCase();
    if (encoding !== "identity" && encoding !== "") return { header, encoding };
  }
  return undefined;
}
