/**
 * A Connect interceptor that reports an undecodable request as the caller's
 * mistake. connect-es (like connect-go) raises `internal` when a stream
 * envelope claims a compression the request never negotiated; that is a
 * malformed request, so the caller gets `invalid_argument` saying what to fix.
 *
 * @module
 */
import type { Interceptor } from "@connectrpc/connect";
import { remapDecodeFailure } from "../wire/rpc-decode-failure";

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
