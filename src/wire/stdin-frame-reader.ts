/**
 * Reads the request body of a binary `process.Process/StreamInput` call (a
 * Connect client stream) as it arrives: each message that is a stdin frame
 * (`stdin-frame.ts`'s shape, whoever encoded it) comes out as views of its
 * stdin bytes in the body's own chunks, never assembled; any other message
 * (the start event, a keepalive, PTY input) comes out whole, for protobuf-es
 * to decode.
 *
 * Why: assembled by Connect, each 1 MiB message of an archive was copied into
 * a zeroed buffer of its own, then carried through an async generator per
 * 64 KiB chunk of the body; the agent spent about as much CPU relaying an
 * archive into `tar` as the service spent relaying it to the agent
 * (bench/provisioner.js). The rules are Connect's envelope (a flags byte, a
 * big-endian uint32 length) and protobuf's length-delimited fields, with the
 * tags of `stdin-frame.ts`, which `stdin-frame-reader.test.ts` checks
 * against protobuf-es and Connect for every split of the body.
 *
 * @module
 */
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { ENVELOPE_HEADER_BYTES, STDIN_FRAME_HEAD_MAX_BYTES, STDIN_FRAME_TAGS } from "./stdin-frame";

/** What {@link StdinFrameReader.push} found in a chunk, in order. */
export interface StdinFrameSink {
  /** Bytes of a stdin frame's stdin: a view of the pushed chunk, valid as long as it is. */
  stdin(bytes: Uint8Array): void;
  /** A whole message that is not a stdin frame, or any flagged envelope, in a buffer of its own. */
  message(flags: number, bytes: Uint8Array): void;
}

/**
 * The length of the head of a stdin frame whose message is `head` (its
 * first bytes) and `length` bytes long, or undefined when it is not one:
 * `StreamInputRequest.data` holding `DataEvent.input` holding
 * `ProcessInput.stdin`, each field the whole of its message. Tags and
 * lengths are read by protobuf-es's own reader, as its decoding of the
 * whole message would read them.
 */
function stdinFrameHead(head: Uint8Array, length: number): number | undefined {
  const reader = new BinaryReader(head);
  let rest = length;
  try {
    for (const tag of STDIN_FRAME_TAGS) {
      const start = reader.pos;
      if (reader.uint32() !== tag) return undefined;
      const size = reader.uint32();
      rest -= reader.pos - start;
      if (size !== rest) return undefined;
    }
  } catch {
    // A varint cut off by the end of the head: no frame of this shape.
    return undefined;
  }
  return reader.pos;
}

/** Where the reader is in the body. */
const enum State {
  /** Gathering an envelope's header. */
  Header,
  /** Gathering the first bytes of a message, to tell a stdin frame. */
  Head,
  /** Passing on a stdin frame's bytes. */
  Stdin,
  /** Gathering a whole message of another kind. */
  Message,
}

/**
 * Splits a `StreamInput` body into stdin bytes and other messages. Push the
 * body's chunks in order; {@link ended} says whether the body stopped
 * between messages. Throws (a `RangeError`) on a message over `maxMessageBytes`.
 */
export class StdinFrameReader {
  private state = State.Header;
  /** The bytes being gathered (header, head or message) and how many are in. */
  private gathered = new Uint8Array(ENVELOPE_HEADER_BYTES);
  private filled = 0;
  private flags = 0;
  /** The current message's length. */
  private length = 0;
  /** Stdin bytes of the current frame still to come. */
  private remaining = 0;

  constructor(private readonly maxMessageBytes: number) {}

  /** True when the body so far ends between two messages. */
  get ended(): boolean {
    return this.state === State.Header && this.filled === 0;
  }

  /** Passes on what `chunk` holds to `sink`, in order. */
  push(chunk: Uint8Array, sink: StdinFrameSink): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.state === State.Stdin) {
        const n = Math.min(this.remaining, chunk.length - at);
        sink.stdin(chunk.subarray(at, at + n));
        at += n;
        this.remaining -= n;
        if (this.remaining === 0) this.startEnvelope();
        continue;
      }
      const want = this.gathered.length - this.filled;
      const n = Math.min(want, chunk.length - at);
      this.gathered.set(chunk.subarray(at, at + n), this.filled);
      this.filled += n;
      at += n;
      if (n === want) this.gatheredAll(sink);
    }
  }

  /** Gathers the next envelope's header. */
  private startEnvelope(): void {
    this.state = State.Header;
    this.gathered = new Uint8Array(ENVELOPE_HEADER_BYTES);
    this.filled = 0;
  }

  /** Moves on once what was being gathered is complete. */
  private gatheredAll(sink: StdinFrameSink): void {
    if (this.state === State.Header) {
      const view = new DataView(this.gathered.buffer);
      this.flags = view.getUint8(0);
      this.length = view.getUint32(1);
      if (this.length > this.maxMessageBytes)
        throw new RangeError(
          `message size ${this.length} is larger than configured readMaxBytes ${this.maxMessageBytes}`,
        );
      // A flagged envelope (end of stream, compressed) is never a stdin frame.
      this.state = this.flags === 0 ? State.Head : State.Message;
      this.gathered = new Uint8Array(
        this.flags === 0 ? Math.min(this.length, STDIN_FRAME_HEAD_MAX_BYTES) : this.length,
      );
      this.filled = 0;
      if (this.gathered.length === 0) this.gatheredAll(sink);
      return;
    }
    if (this.state === State.Head) {
      const head = stdinFrameHead(this.gathered, this.length);
      if (head === undefined) {
        // Another message: gathered whole, the head's bytes first.
        const whole = new Uint8Array(this.length);
        whole.set(this.gathered);
        this.state = State.Message;
        this.filled = this.gathered.length;
        this.gathered = whole;
        if (this.filled === this.length) this.gatheredAll(sink);
        return;
      }
      // Passed on even when empty: an empty write still needs an open stdin.
      const stdin = this.gathered.subarray(head);
      sink.stdin(stdin);
      this.remaining = this.length - head - stdin.length;
      if (this.remaining === 0) this.startEnvelope();
      else this.state = State.Stdin;
      return;
    }
    const message = this.gathered;
    this.startEnvelope();
    sink.message(this.flags, message);
  }
}
