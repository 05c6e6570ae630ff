import { create, toBinary } from "@bufbuild/protobuf";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { StreamInputRequestSchema } from "../gen/envd/process/process_pb";
import { stdinFrame } from "./stdin-frame";

/** What Connect and protobuf-es put on the wire for one stdin message. */
function connectFrame(stdin: Uint8Array): Uint8Array {
  const message = create(StreamInputRequestSchema, {
    event: { case: "data", value: { input: { input: { case: "stdin", value: stdin } } } },
  });
  return encodeEnvelope(0, toBinary(StreamInputRequestSchema, message));
}

describe("stdinFrame", () => {
  // Around each width of the three nested length prefixes (varints of 1, 2, 3 and 4 bytes).
  it.each([
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
  ])("frames %i bytes of stdin exactly as Connect and protobuf-es do", (size) => {
    const stdin = new Uint8Array(size);
    for (let i = 0; i < size; i++) stdin[i] = (i * 31 + 7) & 0xff;
    expect(Buffer.from(stdinFrame(stdin)).equals(Buffer.from(connectFrame(stdin)))).toBe(true);
  });

  it("keeps the bytes it was given after the caller reuses its buffer", () => {
    const stdin = new Uint8Array([1, 2, 3]);
    const framed = stdinFrame(stdin);
    stdin.fill(9);
    expect(Array.from(framed.subarray(framed.length - 3))).toEqual([1, 2, 3]);
  });
});
