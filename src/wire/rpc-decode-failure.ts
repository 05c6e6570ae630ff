/**
 * A request Connect could not decode reported as the caller's mistake.
 * connect-es (like connect-go) raises `internal` when a stream envelope
 * claims a compression the request never negotiated, or a message does not
 * parse; that is a malformed request, so the caller gets `invalid_argument`
 * saying what to fix. The agent's Connect interceptor
 * (src/agent/rpc-decode-errors.ts) and both servers of binary `StreamInput`
 * (stdin-stream-serve.ts) answer with it.
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";

/** connect-es messages for request framing it could not decode. */
const DECODE_FAILURES = [/compressed envelope/i, /^protocol error/i, /^parse binary/i];

/** `err` as `invalid_argument` when it is connect-es reporting a request it could not decode; otherwise `err` itself. */
export function remapDecodeFailure(err: unknown): unknown {
  const e = ConnectError.from(err);
  if (e.code !== Code.Internal || !DECODE_FAILURES.some((re) => re.test(e.rawMessage))) return err;
  return new ConnectError(
    `the request could not be decoded: ${e.rawMessage}: send uncompressed Connect JSON envelopes (flag 0) or set Connect-Content-Encoding`,
    Code.InvalidArgument,
  );
}
