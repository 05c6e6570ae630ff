/**
 * The sudo socket's protocol: length-prefixed frames (`type u8`, `length
 * u32be`, payload) in both directions. The client sends one `request` frame
 * (JSON, {@link SudoRequest}), then `stdin` / `stdin-end` / `signal` frames;
 * the agent sends `stdout` / `stderr` frames and one `exit` frame. Every byte
 * the agent reads comes from inside the sandbox, so sizes are bounded and the
 * request is validated before anything runs.
 *
 * @module
 */
import * as z from "zod/mini";

export { SUDO_SOCKET_IN_SANDBOX } from "../../wire/sandbox-paths";

/** Frame types. */
export const FRAME = {
  request: 1,
  stdin: 2,
  stdinEnd: 3,
  signal: 4,
  stdout: 5,
  stderr: 6,
  exit: 7,
} as const;

/** Largest request frame (argv and environment together). */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** Largest data frame either side sends. */
export const MAX_DATA_BYTES = 64 * 1024;

/** Signals the client may forward to the command. */
export const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;

// zod/mini: the same checks as zod's classic API in a fraction of the code the
// agent loads at every start (the classic API was half of the agent's bundle).
const name = z.string().check(z.minLength(1), z.maxLength(256));
const text = z.string().check(
  z.maxLength(128 * 1024),
  z.refine((s) => !s.includes("\0"), "must not contain a NUL byte"),
);

/** What the client asks the agent to run. */
export const sudoRequestSchema = z.strictObject({
  /** The command and its arguments; empty only with `shell` or `login`. */
  argv: z.array(text).check(z.maxLength(4096)),
  /** The user to run as (`-u`). */
  user: name,
  /** The caller's working directory. */
  cwd: text.check(z.minLength(1)),
  /** The caller's environment (kept whole with `-E`, otherwise only TERM-like variables). */
  env: z.record(name.check(z.regex(/^[^=\0]+$/)), text),
  /** `-E`: keep the caller's environment. */
  preserveEnv: z.boolean(),
  /** `-s`: run the target's shell. */
  shell: z.boolean(),
  /** `-i`: run the target's login shell in its home. */
  login: z.boolean(),
});

/** A validated request. */
export type SudoRequest = z.infer<typeof sudoRequestSchema>;

/** Encodes one frame. */
export function encodeFrame(type: number, payload: Uint8Array | string): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** Raised for a frame that breaks the protocol; the connection is dropped. */
class FrameError extends Error {}

/**
 * Splits a byte stream into frames. `maxBytes(type)` bounds each type's
 * payload (undefined: the type is not allowed), checked before buffering.
 */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes: (type: number) => number | undefined) {}

  /** Feeds bytes; returns the complete frames. Throws {@link FrameError} on a bad frame. */
  push(chunk: Buffer): Array<{ type: number; payload: Buffer }> {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Array<{ type: number; payload: Buffer }> = [];
    while (this.buf.length >= 5) {
      const type = this.buf.readUInt8(0);
      const len = this.buf.readUInt32BE(1);
      const max = this.maxBytes(type);
      if (max === undefined) throw new FrameError(`unexpected frame type ${type}`);
      if (len > max) throw new FrameError(`frame of type ${type} is ${len} bytes, over ${max}`);
      if (this.buf.length < 5 + len) break;
      out.push({ type, payload: Buffer.from(this.buf.subarray(5, 5 + len)) });
      this.buf = this.buf.subarray(5 + len);
    }
    return out;
  }
}
