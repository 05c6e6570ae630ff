import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { StreamInputRequestSchema } from "../gen/envd/process/process_pb";
import { stdinFrame } from "./stdin-frame";
import { StdinFrameReader } from "./stdin-frame-reader";

type Request = MessageInitShape<typeof StreamInputRequestSchema>;

/** What a reader passed on: stdin runs joined (a pipe sees one byte stream), other messages decoded. */
type Seen = { stdin: string } | { message: unknown; flags: number };

const start: Request = {
  event: { case: "start", value: { process: { selector: { case: "pid", value: 42 } } } },
};
const stdinOf = (bytes: Uint8Array): Request => ({
  event: { case: "data", value: { input: { input: { case: "stdin", value: bytes } } } },
});
const pty: Request = {
  event: { case: "data", value: { input: { input: { case: "pty", value: Buffer.from("ls\r") } } } },
};
const keepalive: Request = { event: { case: "keepalive", value: {} } };

/** Connect's envelope of `request` as protobuf-es encodes it. */
const enveloped = (request: Request): Uint8Array =>
  encodeEnvelope(0, toBinary(StreamInputRequestSchema, create(StreamInputRequestSchema, request)));

/** `n` bytes of a pattern that shows a byte out of place. */
function patterned(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

/** Pushes `body` cut at `cuts` into a reader; returns what it passed on and whether it ended between messages. */
function read(body: Uint8Array, cuts: number[], max = 1 << 20): { seen: Seen[]; ended: boolean } {
  const reader = new StdinFrameReader(max);
  const seen: Seen[] = [];
  const sink = {
    stdin(bytes: Uint8Array) {
      const last = seen.at(-1);
      const hex = Buffer.from(bytes).toString("hex");
      if (last && "stdin" in last) last.stdin += hex;
      else seen.push({ stdin: hex });
    },
    message(flags: number, bytes: Uint8Array) {
      seen.push({ flags, message: fromBinary(StreamInputRequestSchema, bytes).event });
    },
  };
  let at = 0;
  for (const cut of [...cuts, body.length]) {
    reader.push(body.subarray(at, cut), sink);
    at = cut;
  }
  return { seen, ended: reader.ended };
}

/** What Connect would deliver for `requests`, in the reader's terms. */
function expected(requests: Request[]): Seen[] {
  const seen: Seen[] = [];
  for (const request of requests) {
    const message = create(StreamInputRequestSchema, request);
    const input = message.event.case === "data" ? message.event.value.input?.input : undefined;
    if (input?.case === "stdin") {
      const last = seen.at(-1);
      const hex = Buffer.from(input.value).toString("hex");
      if (last && "stdin" in last) last.stdin += hex;
      else seen.push({ stdin: hex });
    } else seen.push({ flags: 0, message: message.event });
  }
  return seen;
}

const concat = (parts: Uint8Array[]): Uint8Array => Buffer.concat(parts);

describe("StdinFrameReader", () => {
  const small = [
    start,
    stdinOf(patterned(3, 1)),
    keepalive,
    stdinOf(new Uint8Array(0)),
    pty,
    stdinOf(patterned(200, 2)),
  ];
  const body = concat(small.map(enveloped));

  it("passes on stdin and the other messages as Connect decodes them, wherever the body is cut", () => {
    for (let cut = 0; cut <= body.length; cut++) {
      const { seen, ended } = read(body, [cut]);
      expect({ cut, seen }).toEqual({ cut, seen: expected(small) });
      expect(ended).toBe(true);
    }
  });

  it("passes on the same bytes when the body is cut into single bytes", () => {
    const cuts = Array.from({ length: body.length - 1 }, (_, i) => i + 1);
    expect(read(body, cuts).seen).toEqual(expected(small));
  });

  it("reads stdinFrame's frames of every varint width as their stdin, without gathering them", () => {
    const sizes = [0, 1, 127, 128, 16_383, 16_384, 300_000];
    const requests = [start, ...sizes.map((n, i) => stdinOf(patterned(n, i)))];
    const frames = concat([enveloped(start), ...sizes.map((n, i) => stdinFrame(patterned(n, i)))]);
    const reader = new StdinFrameReader(1 << 20);
    let largest = 0;
    const stdin: Uint8Array[] = [];
    // Cut every 64 KiB, as a socket delivers it: no stdin part may be larger than its chunk.
    for (let at = 0; at < frames.length; at += 65_536)
      reader.push(frames.subarray(at, at + 65_536), {
        stdin(bytes) {
          largest = Math.max(largest, bytes.length);
          stdin.push(Buffer.from(bytes));
        },
        message: () => undefined,
      });
    expect(largest).toBeLessThanOrEqual(65_536);
    const want = expected(requests).find((s) => "stdin" in s);
    expect(Buffer.concat(stdin).toString("hex")).toBe(want && "stdin" in want ? want.stdin : "");
  });

  it("gathers a message with a field after its stdin whole, as it is no bare stdin frame", () => {
    const frame = stdinFrame(patterned(10, 3));
    // An unknown field (number 15, varint 1) after the frame's message: protobuf keeps the stdin.
    const message = concat([frame.subarray(5), Uint8Array.of((15 << 3) | 0, 1)]);
    const withField = encodeEnvelope(0, message);
    const { seen } = read(concat([enveloped(start), withField]), [7]);
    expect(seen).toEqual([
      { flags: 0, message: create(StreamInputRequestSchema, start).event },
      { flags: 0, message: fromBinary(StreamInputRequestSchema, message).event },
    ]);
  });

  it("says the body did not end between messages when it stops inside one", () => {
    expect(read(body.subarray(0, body.length - 1), []).ended).toBe(false);
    expect(read(body.subarray(0, 3), []).ended).toBe(false);
  });

  it("passes on a flagged envelope whole, with its flags", () => {
    const end = encodeEnvelope(2, Buffer.from("{}"));
    const reader = new StdinFrameReader(1024);
    const got: Array<[number, string]> = [];
    reader.push(end, {
      stdin: () => undefined,
      message: (flags, bytes) => got.push([flags, Buffer.from(bytes).toString()]),
    });
    expect(got).toEqual([[2, "{}"]]);
  });

  it("refuses a message over its limit before gathering any of it", () => {
    const big = enveloped(stdinOf(patterned(2000, 4)));
    expect(() => read(big, [], 1000)).toThrow(
      /message size 20\d\d is larger than configured readMaxBytes 1000/,
    );
  });
});
