/**
 * Runs short host commands (`cp`, `du`, `umount`, `ip`, `nft`) for the
 * runtime, through the host spawner (host-spawner.ts).
 *
 * @module
 */
import type { Readable } from "node:stream";
import { SandboxIacError } from "../../errors";
import { commandLine, spawnHost } from "./host-spawner";

/** Output of a finished host command. */
export interface ExecResult {
  stdout: string;
  stderr: string;
}

/** Output kept of one stream (as child_process.execFile's `maxBuffer` here before). */
const MAX_OUTPUT = 16 * 1024 * 1024;

/** The text of `stream` until it ends (at most {@link MAX_OUTPUT} bytes kept). */
function collect(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise((resolve) => {
    stream.on("data", (d: Buffer) => {
      if (size + d.length <= MAX_OUTPUT) chunks.push(d);
      size += d.length;
    });
    stream.on("error", () => undefined);
    stream.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

/**
 * Runs `file` with `args` (no shell), feeding it `input` on stdin when
 * given, and resolves with its output; rejects with an `internal`
 * {@link SandboxIacError} naming the command and its stderr (and its input,
 * when `showInput`) when it cannot start or exits non-zero.
 */
export async function execHost(
  operation: string,
  file: string,
  args: readonly string[],
  opts: { input?: string | undefined; showInput?: boolean | undefined } = {},
): Promise<ExecResult> {
  const child = await spawnHost(operation, file, args, { stdin: opts.input !== undefined });
  child.stdin?.end(opts.input);
  const [stdout, stderr, exit] = await Promise.all([
    collect(child.stdout),
    collect(child.stderr),
    child.exited,
  ]);
  if (exit.code === 0) return { stdout, stderr };
  const status = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
  const detail = stderr.trim().slice(-2000) || status;
  const input = opts.showInput && opts.input ? `\ninput:\n${opts.input}` : "";
  throw new SandboxIacError(
    "internal",
    `host command ${commandLine(file, args)} failed: ${detail}${input}`,
    { operation },
  );
}
