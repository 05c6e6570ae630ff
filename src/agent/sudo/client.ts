/**
 * The `sudo` command's client half, run by the base layer's shim as
 * `node agent.js --sudo [sudo options] command...` for a non-root caller:
 * parses sudo's options, sends the request over the agent's sudo socket and
 * relays stdin, stdout, stderr, signals and the exit code.
 *
 * @module
 */
import * as net from "node:net";
import { parseArgs } from "node:util";
import {
  encodeFrame,
  FORWARDED_SIGNALS,
  FRAME,
  FrameDecoder,
  MAX_DATA_BYTES,
  SUDO_SOCKET_IN_SANDBOX,
  type SudoRequest,
} from "./protocol";
import { SandboxIacError } from "../../errors";

const USAGE = "usage: sudo [-EHins] [-u user] [--] command [arg ...]";

const OPTIONS = {
  user: { type: "string", short: "u" },
  "preserve-env": { type: "boolean", short: "E" },
  login: { type: "boolean", short: "i" },
  shell: { type: "boolean", short: "s" },
  // Never prompts (passwordless), and HOME is always the target's: accepted, nothing to do.
  "non-interactive": { type: "boolean", short: "n" },
  "set-home": { type: "boolean", short: "H" },
  help: { type: "boolean", short: "h" },
} as const;

/** The request for `args` (sudo's own argv), or a message saying what is wrong. */
export function parseSudoArgs(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): SudoRequest | { error: string } | { help: true } {
  // Options end at the first operand (sudo's rule); parseArgs would read on.
  const { tokens } = parseArgs({
    args,
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const first = tokens.find((t) => t.kind === "positional" || t.kind === "option-terminator");
  const end = first ? first.index : args.length;
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];
  try {
    ({ values } = parseArgs({ args: args.slice(0, end), options: OPTIONS, strict: true }));
  } catch (err) {
    return { error: `${SandboxIacError.from(err, { operation: "sudo" }).reason}\n${USAGE}` };
  }
  if (values.help) return { help: true };
  const argv = args.slice(first?.kind === "option-terminator" ? end + 1 : end);
  const shell = values.shell === true;
  const login = values.login === true;
  if (argv.length === 0 && !shell && !login) return { error: USAGE };
  const kept: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) kept[k] = v;
  return {
    argv,
    user: values.user ?? "root",
    cwd,
    env: kept,
    preserveEnv: values["preserve-env"] === true,
    shell,
    login,
  };
}

/** Runs sudo for `args`; resolves with the exit code to exit with. */
export function runSudoClient(
  args: string[],
  socketPath = SUDO_SOCKET_IN_SANDBOX,
): Promise<number> {
  const parsed = parseSudoArgs(args, process.cwd(), process.env);
  if ("help" in parsed) {
    process.stdout.write(`${USAGE}\n`);
    return Promise.resolve(0);
  }
  if ("error" in parsed) {
    process.stderr.write(`sudo: ${parsed.error}\n`);
    return Promise.resolve(1);
  }
  return new Promise((resolve) => {
    const sock = net.connect(socketPath);
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      process.stdin.destroy();
      for (const s of FORWARDED_SIGNALS) process.removeAllListeners(s);
      resolve(code);
    };
    const decoder = new FrameDecoder((type) =>
      type === FRAME.exit
        ? 1024
        : type === FRAME.stdout || type === FRAME.stderr
          ? 1 << 20
          : undefined,
    );
    sock.on("connect", () => {
      sock.write(encodeFrame(FRAME.request, JSON.stringify(parsed)));
      process.stdin.on("data", (d: Buffer) => {
        for (let off = 0; off < d.length; off += MAX_DATA_BYTES) {
          if (!sock.write(encodeFrame(FRAME.stdin, d.subarray(off, off + MAX_DATA_BYTES)))) {
            process.stdin.pause();
            sock.once("drain", () => process.stdin.resume());
          }
        }
      });
      process.stdin.on("end", () => sock.write(encodeFrame(FRAME.stdinEnd, "")));
      process.stdin.on("error", () => sock.write(encodeFrame(FRAME.stdinEnd, "")));
      for (const s of FORWARDED_SIGNALS)
        process.on(s, () => sock.write(encodeFrame(FRAME.signal, s)));
    });
    sock.on("data", (chunk: Buffer) => {
      let frames: Array<{ type: number; payload: Buffer }>;
      try {
        frames = decoder.push(chunk);
      } catch (err) {
        process.stderr.write(
          `sudo: bad reply from the agent: ${SandboxIacError.from(err, { operation: "sudo" }).reason}\n`,
        );
        sock.destroy();
        finish(1);
        return;
      }
      for (const f of frames) {
        if (f.type === FRAME.stdout || f.type === FRAME.stderr) {
          const out = f.type === FRAME.stdout ? process.stdout : process.stderr;
          if (!out.write(f.payload)) {
            sock.pause();
            out.once("drain", () => sock.resume());
          }
        } else if (f.type === FRAME.exit) {
          const exit = JSON.parse(f.payload.toString()) as { code: number; signal: number | null };
          finish(exit.signal ? 128 + exit.signal : exit.code);
        }
      }
    });
    sock.on("error", (err: NodeJS.ErrnoException) => {
      if (done) return;
      const why =
        err.code === "EACCES"
          ? "only the user `user` (and root) may use sudo in this sandbox"
          : `cannot reach the sandbox agent at ${socketPath} (${err.code ?? err.message})`;
      process.stderr.write(`sudo: ${why}\n`);
      finish(1);
    });
    sock.on("close", () => {
      if (!done) process.stderr.write("sudo: the agent closed the connection\n");
      finish(1);
    });
  });
}
