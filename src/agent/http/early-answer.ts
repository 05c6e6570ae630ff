/**
 * Answers given before the request's body was read to its end: a 401, a
 * refusal, a disk full mid-upload. The connection stays usable for the
 * client's next request only once the rest of this body has been read, since
 * HTTP/1.1 frames the next request after it; closing instead makes a client
 * still writing the body (a streaming Connect request the agent refuses) see
 * a reset rather than the answer. So the agent reads and discards a bounded
 * rest, and closes only past the bound.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { PassThrough, type Readable } from "node:stream";

/** The most of a body's rest read and discarded after an early answer; past it the connection closes. */
const DRAIN_MAX_BYTES = 4 * 1024 * 1024;
/** How long the rest may take (a streaming request's body may never end); past it the connection closes. */
const DRAIN_MAX_MS = 5_000;

/**
 * Reads and discards what is left of `res.req`'s body, once `res` has been
 * answered; closes the connection past {@link DRAIN_MAX_BYTES} or
 * {@link DRAIN_MAX_MS}. A no-op for a body already read.
 */
export function drainAfterAnswer(res: ServerResponse): void {
  const req = res.req;
  if (req.readableEnded) return;
  // Flowing now, so that the body never stalls the connection while the answer goes out.
  req.resume();
  // After Node's own 'finish' handler, which may take the request over (its _dump).
  res.once("finish", () => {
    if (req.readableEnded || req.destroyed) return;
    let drained = 0;
    const close = () => {
      cleanUp();
      req.socket?.destroy();
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN_MAX_BYTES) close();
    };
    const timer = setTimeout(close, DRAIN_MAX_MS);
    timer.unref();
    const cleanUp = () => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", cleanUp);
      req.off("close", cleanUp);
    };
    req.on("data", onData);
    req.once("end", cleanUp);
    req.once("close", cleanUp);
    req.resume();
  });
}

/** What the body stream of {@link requestBody} buffers: a few of the socket's 64 KiB reads, so it never throttles them. */
const BODY_BUFFER_BYTES = 1024 * 1024;

/**
 * The body of `req` as a stream its consumer may destroy on failure (as
 * `pipeline` does) without destroying the request, which would reset the
 * connection before the answer goes out: the request is unpiped and paused
 * instead, for {@link drainAfterAnswer}.
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
