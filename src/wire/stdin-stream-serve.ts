/**
 * Serving `process.Process/StreamInput` in binary protobuf (the bulk stdin
 * of the Provisioner's archive into `tar`) without Connect's message
 * pipeline, as Connect's handler would answer it: each stdin frame's bytes
 * go from the request body's chunks straight into the process's input
 * (`stdin-frame-reader.ts`), and the body is read only as fast as the input
 * takes it. Every other message is decoded by protobuf-es. The answer is
 * Connect's streaming answer, encoded by Connect's own pieces: the response
 * message, then the end-of-stream message, with any error in it.
 *
 * Two servers use it, with the same rules and answers: the agent, writing
 * into a process's stdin through its process registry
 * (src/agent/process/stdin-stream.ts), and the service, writing into the
 * process's stdin pipe itself (src/local/proxy/direct-stdin.ts).
 *
 * Why: through Connect, the agent copied each 1 MiB message into a zeroed
 * buffer of its own and ran its async pipeline once per 64 KiB chunk of the
 * body, on a path where the machine's two cores are the limit: the agent's
 * CPU per 10,000-file archive (51 MiB) was 0.13-0.18 s in a client's first
 * uploads, 0.09-0.14 s this way (bench/provisioner.js, the fast mode). JSON
 * `StreamInput` (the SDK's) still goes through Connect.
 *
 * @module
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { compressedFlag, encodeEnvelope } from "@connectrpc/connect/protocol";
import {
  contentTypeStreamProto,
  createEndStreamSerialization,
  endStreamFlag,
  parseTimeout,
} from "@connectrpc/connect/protocol-connect";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Writable } from "node:stream";
import {
  StreamInputRequestSchema,
  StreamInputResponseSchema,
  type ProcessInput,
  type ProcessSelector,
} from "../gen/envd/process/process_pb";
import { remapDecodeFailure } from "./rpc-decode-failure";
import type { ScavengeEvery } from "./scavenge";
import { StdinFrameReader, type StdinFrameSink } from "./stdin-frame-reader";

/** The end-of-stream message's encoding: Connect's, with its default JSON options. */
const END_STREAM = createEndStreamSerialization({});
/** The answer's message, `StreamInputResponse {}`, enveloped once. */
const RESPONSE_MESSAGE = encodeEnvelope(
  0,
  toBinary(StreamInputResponseSchema, create(StreamInputResponseSchema)),
);

/** Where a served `StreamInput` call's input goes. Throw a `ConnectError` to answer with it. */
export interface StdinTarget {
  /** A start event: the process the input is for. */
  start(process: ProcessSelector | undefined): void;
  /** A stdin frame's bytes: a view of the body's chunk, valid during the call. */
  stdin(bytes: Uint8Array): void;
  /** Any other data event's input (stdin not framed, PTY input, none). */
  input(input: ProcessInput["input"] | undefined): void;
  /** True while the input holds writes not taken yet: the body is read on once {@link drained}. */
  full(): boolean;
  /** Settles once what was written is taken (or can no longer be). */
  drained(): Promise<void>;
  /** The body ended whole: settles once what was written is taken; the call is then answered. */
  finish(): Promise<void>;
  /** The call is over (answered, or its client gone). @default nothing */
  close?(): void;
}

/** Settles once `stream` wants more writes: it drained, closed, or never filled. */
export function drainedOf(stream: Writable | undefined): Promise<void> {
  if (!stream || !stream.writableNeedDrain || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

/** How {@link serveStdinStream} serves a call. */
export interface StdinStreamOptions {
  /** The most bytes one message may take: Connect's `readMaxBytes`. */
  readMaxBytes: number;
  target: StdinTarget;
  /** Counts the body's bytes towards forced scavenges (scavenge.ts). */
  scavenges: ScavengeEvery;
  /** Headers of the answer besides its content type. @default none */
  headers?: OutgoingHttpHeaders;
  /** Bytes of the body already read from `req`, taken before the rest. @default none */
  read?: readonly Buffer[];
}

/**
 * The body of a `StreamInput` call's answer, as Connect's handler encodes it:
 * the response message then the end of the stream, or the end of the stream
 * alone with `error` in it.
 */
function answerBody(error: ConnectError | undefined): Buffer {
  const end = encodeEnvelope(
    endStreamFlag,
    END_STREAM.serialize({ metadata: new Headers(), ...(error ? { error } : {}) }),
  );
  return error ? Buffer.from(end) : Buffer.concat([RESPONSE_MESSAGE, end]);
}

/**
 * Serves one binary `StreamInput` call on `req` and `res`, already
 * authorized. Answers once the body has ended and the target has taken
 * everything, or at the first error; the caller drains what an early answer
 * left unread (early-answer.ts).
 */
export function serveStdinStream(
  req: IncomingMessage,
  res: ServerResponse,
  options: StdinStreamOptions,
): void {
  const { target, scavenges } = options;
  const reader = new StdinFrameReader(options.readMaxBytes);
  let started = false;
  let answered = false;
  let timer: NodeJS.Timeout | undefined;

  const over = (): boolean => {
    if (answered) return false;
    answered = true;
    if (timer) clearTimeout(timer);
    req.off("data", onData);
    req.off("end", onEnd);
    target.close?.();
    return true;
  };
  const answer = (error: ConnectError | undefined): void => {
    if (!over()) return;
    // Answered by someone else already (the service's answer to a sandbox cut): nothing to add.
    if (res.headersSent || res.destroyed) return void res.destroy();
    res.writeHead(200, { ...options.headers, "Content-Type": contentTypeStreamProto });
    res.end(answerBody(error));
  };
  // As Connect's handler answers: its own errors as they are (a decoding
  // failure as the caller's), anything else as an internal error.
  const fail = (err: unknown): void => {
    const e = remapDecodeFailure(err);
    answer(
      e instanceof ConnectError
        ? e
        : new ConnectError("internal error", Code.Internal, undefined, undefined, e),
    );
  };

  /** Input before the start event is refused as Connect's path refuses it. */
  const assertStarted = (): void => {
    if (!started)
      throw new ConnectError("stream input must start with a start event", Code.FailedPrecondition);
  };
  const sink: StdinFrameSink = {
    stdin(bytes) {
      assertStarted();
      target.stdin(bytes);
    },
    message(flags, bytes) {
      // A request envelope's flags as Connect's handler takes them: a
      // compressed one refused in its wording, an end of stream skipped.
      if ((flags & compressedFlag) === compressedFlag)
        throw new ConnectError(
          "received compressed envelope, but do not know how to decompress",
          Code.Internal,
        );
      if ((flags & endStreamFlag) === endStreamFlag) return;
      let request;
      try {
        request = fromBinary(StreamInputRequestSchema, bytes);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        // Connect's own wording, which remapDecodeFailure turns into invalid_argument.
        throw new ConnectError(`parse binary: ${why}`, Code.Internal);
      }
      const event = request.event;
      if (event.case === "start") {
        target.start(event.value.process);
        started = true;
      } else if (event.case === "data") {
        assertStarted();
        target.input(event.value.input?.input);
      }
    },
  };

  /** Takes a chunk of the body; false once the call is answered. */
  const take = (chunk: Buffer): boolean => {
    try {
      reader.push(chunk, sink);
    } catch (err) {
      fail(err instanceof RangeError ? new ConnectError(err.message, Code.ResourceExhausted) : err);
      return false;
    }
    scavenges.add(chunk.length);
    return !answered;
  };
  // Read on only once the input has taken what was written: a bulk stream
  // is held back by the process, as envd's blocking pipe write does.
  const holdWhileFull = (): void => {
    if (!started || !target.full()) return;
    req.pause();
    void target.drained().then(() => {
      if (!answered) req.resume();
    });
  };
  function onData(chunk: Buffer): void {
    if (take(chunk)) holdWhileFull();
  }
  function onEnd(): void {
    if (!reader.ended) {
      fail(new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument));
      return;
    }
    target.finish().then(
      () => answer(undefined),
      (err: unknown) => fail(err),
    );
  }

  const timeout = parseTimeout(
    req.headers["connect-timeout-ms"]?.toString() ?? null,
    Number.MAX_SAFE_INTEGER,
  );
  if (timeout.error) return fail(timeout.error);
  if (timeout.timeoutMs !== undefined)
    timer = setTimeout(
      () => fail(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
      timeout.timeoutMs,
    );
  // A client gone before the end gets no answer; its deadline stops counting.
  req.once("close", () => {
    if (!req.complete) over();
  });
  for (const chunk of options.read ?? []) if (!take(chunk)) return;
  req.on("data", onData);
  req.on("end", onEnd);
  // A body read before (options.read) may have filled the input already.
  if (started && target.full()) holdWhileFull();
  else req.resume();
}
