/**
 * A Connect interceptor that reports an undecodable request as the caller's
 * mistake. connect-es (like connect-go) raises `internal` when a stream
 * envelope claims a compression the request never negotiated; that is a
 * malformed request, so the caller gets `invalid_argument` saying what to fix.
 *
 * @module
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

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

async function* remapStream<T>(it: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* it;
  } catch (err) {
    throw remapDecodeFailure(err);
  }
}

/** Maps request-decoding failures to `invalid_argument`, unary and streaming alike. */
export const decodeErrorsAsInvalidArgument: Interceptor = (next) => async (req) => {
  try {
    const res = await next(req);
    return res.stream ? { ...res, message: remapStream(res.message) } : res;
  } catch (err) {
    throw remapDecodeFailure(err);
  }
};
