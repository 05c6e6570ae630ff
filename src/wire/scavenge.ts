/**
 * Scavenges on demand, for processes that move bulk bytes through Node
 * streams (the agent's stdin into a command, the service's relay of uploads
 * to an agent).
 *
 * Why: each read of a socket or pipe gives a fresh ArrayBuffer (64 KiB), and
 * V8 counts ArrayBuffer bytes allocated since the last mark-compact against
 * the old generation's limit. Young ones are freed only by a scavenge, which
 * comes when JavaScript fills the young generation: a process relaying bytes
 * allocates little JavaScript per read, so the buffers' bytes reached that
 * limit first and a mark-compact of the whole heap ran instead (in the
 * service, two or three per 44 MiB relayed, traced with a `gc` performance
 * observer: 0.12-0.17 s of the service's CPU per upload of 10,000 files,
 * 0.08-0.11 s with a scavenge per 4 MiB; bench/provisioner.js).
 *
 * @module
 */

/** V8's `gc`, with the options Node 20's V8 takes. */
type GcFunction = (options: { type: "minor" }) => void;
let gc: GcFunction | undefined;

/**
 * Runs a scavenge: frees the young ArrayBuffers of bytes already passed on.
 * V8 gives `gc` only to contexts made after `--expose-gc` is set, so a fresh
 * context's is taken and the caller's own global stays as it was. node:v8
 * and node:vm are required on first use (node:v8 costs the agent's start
 * about as much as node:http), with `require`: the agent's full handler's
 * bundle runs without a dynamic import callback.
 */
export function scavenge(): void {
  if (!gc) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const v8 = require("node:v8") as typeof import("node:v8");
    const vm = require("node:vm") as typeof import("node:vm");
    /* eslint-enable @typescript-eslint/no-require-imports */
    v8.setFlagsFromString("--expose-gc");
    gc = vm.runInNewContext("gc") as GcFunction;
  }
  gc({ type: "minor" });
}

/** Counts bytes passed on and scavenges after every `everyBytes` of them. */
export class ScavengeEvery {
  private since = 0;

  /**
   * @param everyBytes - bytes between scavenges.
   * @param run - what runs a scavenge: {@link scavenge}, or a test's counter.
   */
  constructor(
    private readonly everyBytes: number,
    private readonly run: () => void = scavenge,
  ) {}

  /** Counts `bytes` more; scavenges once `everyBytes` have passed since the last one. */
  add(bytes: number): void {
    this.since += bytes;
    if (this.since < this.everyBytes) return;
    this.since = 0;
    this.run();
  }
}
