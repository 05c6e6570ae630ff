/**
 * One `process.Process/StreamInput` request carrying stdin bytes, as it goes
 * on the wire of a Connect client stream: the envelope (a flags byte, then the
 * message's length as a big-endian uint32) and the protobuf encoding of
 * `StreamInputRequest { data: DataEvent { input: ProcessInput { stdin } } }`,
 * built with a single copy of `stdin`, or with none when `stdin` is a chunk
 * of a {@link framableBuffer}, whose headroom takes the frame's head.
 *
 * Why it is written here rather than by protobuf-es and Connect: their path
 * (`toBinary`, then `encodeEnvelope`) copies each chunk of a bulk upload five
 * times into fresh buffers (once into a writer that doubles to 2 MiB for a
 * 1 MiB chunk, once more for each of the two nested messages whose length
 * prefix widens, once for the result, once into the envelope): about 4 MiB
 * allocated and zeroed per MiB sent, which the client paid in page faults and
 * collections. Field numbers and wire types are read from the generated
 * descriptors (schema/), so the only rules written here are protobuf's own
 * (a length-delimited field is its tag, its length as a varint, its bytes) and
 * the Connect envelope's; `stdin-frame.test.ts` checks the result byte for
 * byte against `toBinary` + `encodeEnvelope`.
 *
 * @module
 */
import type { DescField } from "@bufbuild/protobuf";
import { SandboxIacError } from "../errors";
import {
  ProcessInputSchema,
  StreamInputRequest_DataEventSchema,
  StreamInputRequestSchema,
} from "../gen/envd/process/process_pb";

/** Bytes of a Connect envelope's header: a flags byte and a big-endian uint32 length. */
export const ENVELOPE_HEADER_BYTES = 5;
/** protobuf's wire type of length-delimited fields (bytes, strings, messages). */
const LENGTH_DELIMITED = 2;

/**
 * The tag of `field`: its number and the length-delimited wire type, one byte
 * for numbers below 16 (all three fields here are 1 or 2).
 */
function tagOf(field: DescField): number {
  if (field.number >= 16)
    throw new SandboxIacError(
      "internal",
      `field ${field.name} has number ${field.number}; the stdin frame takes one-byte tags (numbers 1-15): check schema/envd/process/process.proto or widen the tags`,
      { operation: "process.streamInput" },
    );
  return (field.number << 3) | LENGTH_DELIMITED;
}

/**
 * The tags of `StreamInputRequest.data`, `DataEvent.input` and
 * `ProcessInput.stdin`, outermost first: a stdin frame's three fields.
 */
export const STDIN_FRAME_TAGS = [
  tagOf(StreamInputRequestSchema.field.data),
  tagOf(StreamInputRequest_DataEventSchema.field.input),
  tagOf(ProcessInputSchema.field.stdin),
] as const;

/** Bytes of `value` as a protobuf varint. */
function varintSize(value: number): number {
  let n = 1;
  while (value >= 0x80) {
    value >>>= 7;
    n++;
  }
  return n;
}

/** Writes `value` as a protobuf varint at `at`; returns the position after it. */
function writeVarint(out: Uint8Array, at: number, value: number): number {
  while (value >= 0x80) {
    out[at++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  out[at++] = value;
  return at;
}

/**
 * Bytes the message of a stdin frame takes before its stdin at most: the
 * three nested fields' one-byte tags and lengths (varints of at most 5 bytes
 * each).
 */
export const STDIN_FRAME_HEAD_MAX_BYTES = STDIN_FRAME_TAGS.length * (1 + 5);

/** Bytes a stdin chunk's frame takes before the chunk at most: the envelope's header and the message's head. */
export const STDIN_FRAME_HEADROOM = ENVELOPE_HEADER_BYTES + STDIN_FRAME_HEAD_MAX_BYTES;

/** ArrayBuffers made by {@link framableBuffer}: their first {@link STDIN_FRAME_HEADROOM} bytes are the frame's. */
const framable = new WeakSet<ArrayBufferLike>();

/**
 * A buffer whose chunks {@link stdinFrame} frames in place, without a copy:
 * its first {@link STDIN_FRAME_HEADROOM} bytes are left for the frame, and a
 * chunk qualifies when it starts right after them (`subarray(STDIN_FRAME_HEADROOM)`,
 * then any prefix of that). The Provisioner packs its archive into such
 * buffers: a fresh 1 MiB buffer per message and the copy into it cost the
 * client their page faults, the copy and their collection, 44 times per
 * 10,000 files (bench/provisioner.js).
 */
export function framableBuffer(bytes: number): Buffer {
  const buffer = Buffer.allocUnsafeSlow(STDIN_FRAME_HEADROOM + bytes);
  framable.add(buffer.buffer);
  return buffer;
}

/**
 * The enveloped `StreamInputRequest` that sends `stdin` to a process: equal,
 * byte for byte, to Connect's `encodeEnvelope(0, toBinary(StreamInputRequestSchema,
 * { event: { case: "data", value: { input: { input: { case: "stdin", value: stdin } } } } }))`.
 *
 * A chunk of a {@link framableBuffer} at its start is framed in place: the
 * frame's head is written into the headroom before it and the frame is a
 * view of that buffer, valid until the buffer's headroom or chunk is written
 * again (frame one chunk of a buffer at a time, and send it before the
 * buffer is refilled). Any other `stdin` is copied into a fresh buffer, not
 * zeroed first (every byte is written): the caller may reuse `stdin` once
 * this returns.
 */
export function stdinFrame(stdin: Uint8Array): Uint8Array {
  // Lengths from the innermost message out: ProcessInput, DataEvent, StreamInputRequest.
  const input = 1 + varintSize(stdin.length) + stdin.length;
  const event = 1 + varintSize(input) + input;
  const request = 1 + varintSize(event) + event;
  const head = ENVELOPE_HEADER_BYTES + request - stdin.length;
  const inPlace = stdin.byteOffset === STDIN_FRAME_HEADROOM && framable.has(stdin.buffer);
  const out = inPlace
    ? Buffer.from(stdin.buffer, STDIN_FRAME_HEADROOM - head, head + stdin.length)
    : Buffer.allocUnsafeSlow(head + stdin.length);
  out[0] = 0;
  out.writeUInt32BE(request, 1);
  let at = ENVELOPE_HEADER_BYTES;
  out[at++] = STDIN_FRAME_TAGS[0];
  at = writeVarint(out, at, event);
  out[at++] = STDIN_FRAME_TAGS[1];
  at = writeVarint(out, at, input);
  out[at++] = STDIN_FRAME_TAGS[2];
  at = writeVarint(out, at, stdin.length);
  if (!inPlace) out.set(stdin, at);
  return out;
}
