/**
 * The agent's binary `process.Process/StreamInput` (src/wire/stdin-stream-serve.ts
 * serves it, as the service's direct stdin does): the input goes to the
 * process the start event names, through the process registry, with
 * envd's errors for a process gone, a PTY or a closed stdin (`selection.ts`).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ScavengeEvery } from "../../wire/scavenge";
import { serveStdinStream as serve, type StdinTarget } from "../../wire/stdin-stream-serve";
import type { ManagedProcess } from "./managed-process";
import type { ProcessRegistry } from "./registry";
import { liveOnly, sendInput } from "./selection";

/**
 * Body bytes between forced scavenges (src/wire/scavenge.ts): each 64 KiB
 * chunk of the body is an ArrayBuffer of its own, freed only by a scavenge,
 * and the agent allocates too little JavaScript per chunk for one to come by
 * itself; without them an upload of 44 MiB ran mark-compacts of the whole
 * heap instead.
 */
const SCAVENGE_AFTER_BYTES = 512 * 1024;
const scavenges = new ScavengeEvery(SCAVENGE_AFTER_BYTES);

/** What a binary `StreamInput` call needs of the agent. */
export interface StdinStreamOptions {
  registry: ProcessRegistry;
  /** The most bytes one message may take: Connect's `readMaxBytes`. */
  readMaxBytes: number;
}

/**
 * Serves one binary `StreamInput` call on `req` and `res`, already
 * authorized. Answers once the body has ended and the process's stdin has
 * taken everything, or at the first error; the caller drains what an early
 * answer left unread (src/wire/early-answer.ts).
 */
export function serveStdinStream(
  req: IncomingMessage,
  res: ServerResponse,
  options: StdinStreamOptions,
): void {
  // Set by the start event; the other calls come only once it was (stdin-stream-serve.ts).
  let proc: ManagedProcess | undefined;
  const target: StdinTarget = {
    start(process) {
      proc = liveOnly(options.registry, process);
    },
    stdin(bytes) {
      if (proc) sendInput(proc, { case: "stdin", value: bytes });
    },
    input(input) {
      if (proc) sendInput(proc, input);
    },
    full: () => proc?.stdinFull() ?? false,
    drained: () => proc?.drained() ?? Promise.resolve(),
    finish: () => proc?.drained() ?? Promise.resolve(),
  };
  serve(req, res, { readMaxBytes: options.readMaxBytes, target, scavenges });
}
