/**
 * `process.Process/StreamInput` in binary protobuf (the bulk stdin of the
 * Provisioner's archive into `tar`), served without Connect's message
 * pipeline: each stdin frame's bytes go from the request body's chunks
 * straight into the process's stdin pipe (`src/wire/stdin-frame-reader.ts`),
 * and the body is read only as fast as the pipe takes it. Every other message
 * is decoded by protobuf-es and handled as `service.ts` handles it, with the
 * same errors (`selection.ts`); the answer is Connect's streaming answer,
 * encoded by Connect's own pieces: the response message, then the
 * end-of-stream message, with any error in it.
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
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  StreamInputRequestSchema,
  StreamInputResponseSchema,
} from "../../gen/envd/process/process_pb";
import { ScavengeEvery } from "../../wire/scavenge";
import { StdinFrameReader, type StdinFrameSink } from "../../wire/stdin-frame-reader";
import { remapDecodeFailure } from "../rpc-decode-errors";
import type { ManagedProcess } from "./managed-process";
import type { ProcessRegistry } from "./registry";
import { liveOnly, sendInput } from "./selection";

/** The end-of-stream message's encoding: Connect's, with its default JSON options. */
const END_STREAM = createEndStreamSerialization({});
/** The answer's message, `StreamInputResponse {}`, enveloped once. */
const RESPONSE_MESSAGE = encodeEnvelope(
  0,
  toBinary(StreamInputResponseSchema, create(StreamInputResponseSchema)),
);

/**
 * Body bytes between forced scavenges (src/wire/scavenge.ts): each 64 KiB
 * chunk of the body is an ArrayBuffer of its own, freed only by a scavenge,
 * and the agent allocates too little JavaScript per chunk for one to come by
 * itself; without them an upload of 44 MiB ran mark-compacts of the whole
 * heap instead.
 */
const SCAVENGE_AFTER_BYTES = 512 * 1024;

/** What a binary `StreamInput` call needs of the agent. */
export interface StdinStreamOptions {
  registry: ProcessRegistry;
  /** The most bytes one message may take: Connect's `readMaxBytes`. */
  readMaxBytes: number;
}

/**
 * Serves one binary `StreamInput` call on `req` and `res`, already
 * authorized. Answers once the body has ended and the process's stdin has
 * taken everything, or at the first error; the caller drains what an early
 * answer left unread (src/wire/early-answer.ts).
 */
export function serveStdinStream(
  req: IncomingMessage,
  res: ServerResponse,
  options: StdinStreamOptions,
): void {
  const { registry } = options;
  const reader = new StdinFrameReader(options.readMaxBytes);
  const scavenges = new ScavengeEvery(SCAVENGE_AFTER_BYTES);
  let proc: ManagedProcess | undefined;
  let answered = false;
  let timer: NodeJS.Timeout | undefined;

  const answer = (error: ConnectError | undefined): void => {
    if (answered) return;
    answered = true;
    if (timer) clearTimeout(timer);
    req.off("data", onData);
    req.off("end", onEnd);
    const end = encodeEnvelope(
      endStreamFlag,
      END_STREAM.serialize({ metadata: new Headers(), ...(error ? { error } : {}) }),
    );
    res.writeHead(200, { "Content-Type": contentTypeStreamProto });
    res.end(error ? end : Buffer.concat([RESPONSE_MESSAGE, end]));
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

  /** The process the start event named; input before it is refused as Connect's path refuses it. */
  const started = (): ManagedProcess => {
    if (!proc)
      throw new ConnectError("stream input must start with a start event", Code.FailedPrecondition);
    return proc;
  };
  const sink: StdinFrameSink = {
    stdin(bytes) {
      sendInput(started(), { case: "stdin", value: bytes });
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
      if (event.case === "start") proc = liveOnly(registry, event.value.process);
      else if (event.case === "data") sendInput(started(), event.value.input?.input);
    },
  };

  function onData(chunk: Buffer): void {
    try {
      reader.push(chunk, sink);
    } catch (err) {
      fail(err instanceof RangeError ? new ConnectError(err.message, Code.ResourceExhausted) : err);
      return;
    }
    scavenges.add(chunk.length);
    // Read on only once the pipe has taken what was written: a bulk stream
    // is held back by the process, as envd's blocking pipe write does.
    if (proc?.stdinFull()) {
      req.pause();
      void proc.drained().then(() => {
        if (!answered) req.resume();
      });
    }
  }
  function onEnd(): void {
    if (!reader.ended) {
      fail(new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument));
      return;
    }
    void (proc?.drained() ?? Promise.resolve()).then(() => answer(undefined));
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
    if (!req.complete && timer) clearTimeout(timer);
  });
  req.on("data", onData);
  req.on("end", onEnd);
}
