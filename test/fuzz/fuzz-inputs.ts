/**
 * Malformed inputs for the agent fuzz test: a seeded generator, so a failing
 * case is reproduced by its seed and index.
 */

/** A small seeded PRNG (mulberry32): the same seed gives the same cases. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks one of `xs`. */
export const pick = <T>(rand: () => number, xs: readonly T[]): T =>
  xs[Math.floor(rand() * xs.length)];

/**
 * Paths a client might send by mistake or malice. None removes what the
 * agent itself needs (its socket under /run), so later cases still reach it.
 */
export const BAD_PATHS = [
  "",
  "/",
  "/..",
  "~root",
  "~",
  "a\0b",
  "/tmp/\0",
  "/tmp/" + "n".repeat(300),
  "/tmp/" + "d/".repeat(2100),
  "x".repeat(5000),
  "/usr/fuzz-readonly",
  "/usr/bin",
  "/proc/self/mem",
  "/proc/1/root/x",
  "/dev/null",
  "/tmp/loop-a",
  "/tmp/loop-a/inside",
  "/tmp/fuzz-dir",
  "/tmp/fuzz-dir/",
  "/tmp/fuzz-file/child",
  "/tmp/fuzz-file",
  "../../../../tmp/fuzz-dir/../fuzz-up",
  "\u00e9\u{1f600}/\ud800",
  "%2e%2e/%00",
  "/tmp/with\nnewline",
] as const;

/** Values that are the wrong type for a string field, or odd strings. */
export const BAD_VALUES: readonly unknown[] = [
  null,
  123,
  -1,
  1e308,
  true,
  [],
  {},
  ["a"],
  { nested: { deep: [1, 2] } },
  "4294967296",
  "-5",
  "NaN",
  "SIGNAL_SIGKILL",
  "EVENT_TYPE_CREATE",
];

/** Whole request bodies that are not what any route takes. */
export const BAD_BODIES: readonly (string | Buffer)[] = [
  "",
  "null",
  "[]",
  "{",
  "}",
  '"string"',
  "123",
  "\u0000\u0001\u0002",
  Buffer.from([0xff, 0xfe, 0x00, 0x00, 0x00, 0x10, 0x7b]),
  Buffer.from([0x00, 0x00, 0x00, 0x00, 0x05, 0x7b, 0x7d]),
  Buffer.from([0x02, 0x00, 0x00, 0x00, 0x02, 0x7b, 0x7d]),
  Buffer.from([0x00, 0xff, 0xff, 0xff, 0xff]),
  '{"path": {"$ne": 1}}',
  "--boundary\r\nContent-Disposition: form-data\r\n\r\nx\r\n",
  "x".repeat(70_000),
];

/** Content types, right and wrong, for any route. */
export const CONTENT_TYPES = [
  "application/json",
  "application/connect+json",
  "application/proto",
  "application/connect+proto",
  "application/grpc",
  "application/grpc-web+proto",
  "multipart/form-data",
  "multipart/form-data; boundary=",
  "multipart/form-data; boundary=zz",
  "application/octet-stream",
  "text/plain",
  "",
  "application/json; charset=utf-16",
] as const;

/** One Connect envelope (flag, big-endian length, payload). */
export function envelope(payload: string | Buffer, flags = 0): Buffer {
  const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}
