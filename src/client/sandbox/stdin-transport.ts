/**
 * The Connect transport of bulk stdin (`process.Process/StreamInput`, e.g. an
 * archive into `tar -x`): Connect's own Node transport, except that a
 * `StreamInput` call frames each stdin message itself (`src/wire/stdin-frame.ts`:
 * at most one copy of the bytes, none for the Provisioner's archive chunks,
 * which leave room for the frame) instead of through `toBinary` and
 * `encodeEnvelope` (five copies into fresh buffers, about 4 MiB allocated and
 * zeroed per MiB).
 *
 * Everything else of such a call is Connect's, through its exported protocol
 * pieces, as its `createTransport` composes them: the request headers,
 * interceptors, deadline and abort, the HTTP/1.1 client, and the reading of the
 * answer (status and content type checked, the end-of-stream message parsed,
 * its error raised as a `ConnectError`). Only the request body's encoding
 * differs, and it is the same bytes.
 *
 * @internal
 * @module
 */
import type {
  DescMessage,
  DescMethod,
  DescMethodStreaming,
  MessageInitShape,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type ContextValues,
  type StreamResponse,
  type Transport,
} from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  createConnectTransport,
  createNodeHttpClient,
} from "@connectrpc/connect-node";
import {
  createMethodSerializationLookup,
  createMethodUrl,
  encodeEnvelope,
  pipe,
  runStreamingCall,
  transformDecompressEnvelope,
  transformParseEnvelope,
  transformSplitEnvelope,
} from "@connectrpc/connect/protocol";
import {
  createEndStreamSerialization,
  endStreamFlag,
  requestHeaderWithCompression,
  validateResponseWithCompression,
} from "@connectrpc/connect/protocol-connect";
import { Process, type StreamInputRequest } from "../../gen/envd/process/process_pb";
import { stdinFrame } from "../../wire/stdin-frame";

/** What the answer may come compressed with: connect-node's default. */
const ACCEPT_COMPRESSION = [compressionGzip, compressionBrotli];
/** No limit on what is read, as connect-node's default. */
const READ_MAX_BYTES = 0xffffffff;

/**
 * The request body of a `StreamInput` call: each stdin message framed by
 * {@link stdinFrame} (in place, or with one copy), any other message (the
 * start event, a keepalive) serialized and enveloped by Connect.
 */
async function* framedBody(
  method: DescMethodStreaming,
  messages: AsyncIterable<StreamInputRequest>,
): AsyncGenerator<Uint8Array> {
  const serialization = createMethodSerializationLookup(method, undefined, undefined, {
    readMaxBytes: READ_MAX_BYTES,
    writeMaxBytes: READ_MAX_BYTES,
  }).getI(true);
  for await (const message of messages) {
    const input = message.event.case === "data" ? message.event.value.input?.input : undefined;
    yield input?.case === "stdin"
      ? stdinFrame(input.value)
      : encodeEnvelope(0, serialization.serialize(message));
  }
}

/**
 * Reads the answer's messages: Connect's end-of-stream message ends it, and
 * its error (with the response headers as metadata) is thrown, as Connect's
 * transport does.
 */
async function* answerMessages<O>(
  parsed: AsyncIterable<
    { end: false; value: O } | { end: true; value: { error?: ConnectError; metadata: Headers } }
  >,
  header: Headers,
  trailer: Headers,
): AsyncGenerator<O> {
  let ended = false;
  for await (const chunk of parsed) {
    if (chunk.end) {
      if (ended)
        throw new ConnectError(
          "protocol error: received extra EndStreamResponse",
          Code.InvalidArgument,
        );
      ended = true;
      const error = chunk.value.error;
      if (error) {
        header.forEach((value, key) => error.metadata.append(key, value));
        throw error;
      }
      chunk.value.metadata.forEach((value, key) => trailer.set(key, value));
      continue;
    }
    if (ended)
      throw new ConnectError(
        "protocol error: received extra message after EndStreamResponse",
        Code.InvalidArgument,
      );
    yield chunk.value;
  }
  if (!ended)
    throw new ConnectError("protocol error: missing EndStreamResponse", Code.InvalidArgument);
}

/**
 * The transport of the client's bulk stdin calls to `baseUrl`: binary
 * protobuf over HTTP/1.1, `StreamInput` framed by {@link stdinFrame}.
 */
export function createStdinTransport(baseUrl: string): Transport {
  const base = createConnectTransport({ httpVersion: "1.1", useBinaryFormat: true, baseUrl });
  const httpClient = createNodeHttpClient({ httpVersion: "1.1" });
  const endStream = createEndStreamSerialization({});

  async function streamInput<I extends DescMessage, O extends DescMessage>(
    method: DescMethodStreaming<I, O>,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: Parameters<Transport["stream"]>[3],
    input: AsyncIterable<MessageInitShape<I>>,
    contextValues: ContextValues | undefined,
  ): Promise<StreamResponse<I, O>> {
    const output = createMethodSerializationLookup(method, undefined, undefined, {
      readMaxBytes: READ_MAX_BYTES,
      writeMaxBytes: READ_MAX_BYTES,
    }).getO(true);
    // Connect's rule: undefined or <= 0 is no deadline.
    const deadline = timeoutMs !== undefined && timeoutMs > 0 ? timeoutMs : undefined;
    return runStreamingCall<I, O>({
      ...(signal !== undefined ? { signal } : {}),
      ...(deadline !== undefined ? { timeoutMs: deadline } : {}),
      req: {
        stream: true,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: createMethodUrl(baseUrl, method),
        header: requestHeaderWithCompression(
          method.methodKind,
          true,
          deadline,
          header,
          ACCEPT_COMPRESSION,
          null,
          true,
        ),
        contextValues: contextValues ?? createContextValues(),
        message: input,
      },
      next: async (req) => {
        const res = await httpClient({
          url: req.url,
          method: "POST",
          header: req.header,
          signal: req.signal,
          body: framedBody(req.method, req.message as AsyncIterable<StreamInputRequest>),
        });
        const { compression } = validateResponseWithCompression(
          method.methodKind,
          ACCEPT_COMPRESSION,
          true,
          res.status,
          res.header,
        );
        const trailer = new Headers();
        const parsed = pipe(
          res.body,
          transformSplitEnvelope(READ_MAX_BYTES),
          transformDecompressEnvelope(compression ?? null, READ_MAX_BYTES),
          transformParseEnvelope(output, endStreamFlag, endStream),
          { propagateDownStreamError: true },
        );
        return {
          ...req,
          header: res.header,
          trailer,
          message: answerMessages(parsed, res.header, trailer),
        };
      },
    });
  }

  return {
    unary: (...args) => base.unary(...args),
    stream: (method, signal, timeoutMs, header, input, contextValues) =>
      (method as DescMethod) === Process.method.streamInput
        ? streamInput(method, signal, timeoutMs, header, input, contextValues)
        : base.stream(method, signal, timeoutMs, header, input, contextValues),
  };
}
