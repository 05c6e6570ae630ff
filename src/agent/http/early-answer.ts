/**
 * The body of a request as a stream its consumer may destroy without
 * resetting the connection before the answer goes out (src/wire/early-answer.ts
 * drains what is left once answered).
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import { PassThrough, type Readable } from "node:stream";

/** What the body stream of {@link requestBody} buffers: a few of the socket's 64 KiB reads, so it never throttles them. */
const BODY_BUFFER_BYTES = 1024 * 1024;

/**
 * The body of `req` as a stream its consumer may destroy on failure (as
 * `pipeline` does) without destroying the request, which would reset the
 * connection before the answer goes out: the request is unpiped and paused
 * instead, for `drainAfterAnswer` (src/wire/early-answer.ts).
 */
export function requestBody(req: IncomingMessage): Readable {
  const body = new PassThrough({ highWaterMark: BODY_BUFFER_BYTES });
  // pipe() passes no abort on: a client gone mid-body must still fail the consumer.
  req.once("close", () => {
    if (!req.complete) {
      body.destroy(
        Object.assign(new Error("the client went away before the body ended"), {
          code: "ECONNRESET",
        }),
      );
    }
  });
  return req.pipe(body);
}
