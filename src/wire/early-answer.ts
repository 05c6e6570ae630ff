/**
 * Answers given before the request's body was read to its end: a 401, a
 * refusal, a disk full mid-upload, a sandbox killed while a request to it was
 * being relayed. HTTP/1.1 frames a connection's next request after this
 * body, so the connection stays usable for the client's next request (a
 * keep-alive pool, a proxy in front, reuses it) only once the rest has been
 * read. Left unread, the next request on that connection waits forever.
 * Closing at once instead makes a client still writing the body (a streaming
 * Connect request that is refused) see a reset rather than the answer. So the
 * rest is read and discarded up to a bound, and the connection closes only
 * past it. The agent and the service both answer this way.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The most of a body's rest read and discarded after an early answer; past it
 * the connection closes, and a client still writing may see a reset instead
 * of the answer.
 */
export const DRAIN_MAX_BYTES = 4 * 1024 * 1024;
/** How long the rest may take (a streaming request's body may never end); past it the connection closes. */
const DRAIN_MAX_MS = 5_000;

/**
 * Reads and discards what is left of `req`'s body, taking it from whatever
 * it was piped to; closes the connection past {@link DRAIN_MAX_BYTES} or
 * {@link DRAIN_MAX_MS}. Called once the answer has gone out (its 'finish').
 * A no-op for a body already read, or a request already gone.
 */
function drainRest(req: IncomingMessage): void {
  if (req.readableEnded || req.destroyed) return;
  req.unpipe();
  // All of it already read off the connection (the usual case): nothing to bound.
  if (req.complete) return void flow(req);
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
  let stop = (): void => undefined;
  const cleanUp = () => {
    clearTimeout(timer);
    stop();
    req.off("data", onData);
    req.off("end", cleanUp);
    req.off("close", cleanUp);
  };
  req.on("data", onData);
  req.once("end", cleanUp);
  req.once("close", cleanUp);
  stop = flow(req);
}

/**
 * Lets what is left of `req`'s body flow to its end (each chunk a 'data'
 * event); returns what stops it. A body read through its async iterator
 * (Connect's handlers read requests so) keeps a 'readable' listener, with
 * which `resume()` does nothing: the agent's answer to a `StreamInput` for a
 * process that had exited then left the rest unread, and the next request
 * the service relayed on that connection was never answered. Such a body is
 * read on 'readable' instead.
 */
function flow(req: IncomingMessage): () => void {
  if (req.listenerCount("readable") === 0) {
    req.resume();
    return () => undefined;
  }
  const readRest = () => {
    while (req.read() !== null);
  };
  req.on("readable", readRest);
  readRest();
  return () => req.off("readable", readRest);
}

/**
 * For an answer being given now before the body was read: the body flows at
 * once, so it never stalls the connection while the answer goes out, and
 * what is left once the answer is out is drained ({@link drainRest}).
 */
export function drainAfterAnswer(res: ServerResponse): void {
  const req = res.req;
  if (req.readableEnded) return;
  req.resume();
  // After Node's own 'finish' handler, which may take the request over (its _dump).
  res.once("finish", () => drainRest(req));
}

/**
 * Makes every answer of a server drain what its request left unread
 * ({@link drainRest}): registered as the request arrives, it acts only when
 * the answer is complete and the body is not, whatever route answered (a
 * relay cut short, a refusal, an error).
 */
export function drainWhenAnswered(req: IncomingMessage, res: ServerResponse): void {
  res.once("finish", () => drainRest(req));
}
