import { create, toBinary } from "@bufbuild/protobuf";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { StreamInputRequestSchema } from "../gen/envd/process/process_pb";
import { framableBuffer, STDIN_FRAME_HEADROOM, stdinFrame } from "./stdin-frame";

/** What Connect and protobuf-es put on the wire for one stdin message. */
function connectFrame(stdin: Uint8Array): Uint8Array {
  const message = create(StreamInputRequestSchema, {
    event: { case: "data", value: { input: { input: { case: "stdin", value: stdin } } } },
  });
  return encodeEnvelope(0, toBinary(StreamInputRequestSchema, message));
}

/** Around each width of the three nested length prefixes (varints of 1, 2, 3 and 4 bytes). */
const SIZES = [
  0,
  1,
  124,
  125,
  127,
  128,
  16_378,
  16_380,
  16_383,
  16_384,
  1 << 20,
  2_097_150,
  2_097_152,
];

/** `stdin` filled with a pattern that shows a byte out of place. */
function patterned(stdin: Uint8Array): Uint8Array {
  for (let i = 0; i < stdin.length; i++) stdin[i] = (i * 31 + 7) & 0xff;
  return stdin;
}

describe("stdinFrame", () => {
  it.each(SIZES)("frames %i bytes of stdin exactly as Connect and protobuf-es do", (size) => {
    const stdin = patterned(new Uint8Array(size));
    expect(Buffer.from(stdinFrame(stdin)).equals(Buffer.from(connectFrame(stdin)))).toBe(true);
  });

  it.each(SIZES)(
    "frames %i bytes at the start of a framable buffer in place, exactly as Connect and protobuf-es do",
    (size) => {
      const stdin = patterned(
        framableBuffer(size + 7).subarray(STDIN_FRAME_HEADROOM, STDIN_FRAME_HEADROOM + size),
      );
      const expected = Buffer.from(connectFrame(stdin));
      const framed = stdinFrame(stdin);
      expect(framed.buffer).toBe(stdin.buffer);
      expect(framed.byteOffset + framed.length).toBe(stdin.byteOffset + stdin.length);
      expect(Buffer.from(framed).equals(expected)).toBe(true);
    },
  );

  it("copies a chunk of a framable buffer that does not start right after its headroom", () => {
    const buffer = framableBuffer(64);
    const stdin = patterned(buffer.subarray(STDIN_FRAME_HEADROOM + 1, STDIN_FRAME_HEADROOM + 33));
    const before = Buffer.from(buffer);
    const framed = stdinFrame(stdin);
    expect(framed.buffer).not.toBe(stdin.buffer);
    expect(Buffer.from(framed).equals(Buffer.from(connectFrame(stdin)))).toBe(true);
    expect(buffer.equals(before)).toBe(true);
  });

  it("keeps the bytes it was given after the caller reuses its buffer", () => {
    const stdin = new Uint8Array([1, 2, 3]);
    const framed = stdinFrame(stdin);
    stdin.fill(9);
    expect(Array.from(framed.subarray(framed.length - 3))).toEqual([1, 2, 3]);
  });
});
