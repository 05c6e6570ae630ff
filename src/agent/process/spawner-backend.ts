/**
 * A pipes {@link Backend} over the agent's spawner (spawner.ts): the same
 * streams, end and signals as the child_process one in backend.ts.
 *
 * @module
 */
import type { Socket } from "node:net";
import { PIPE_CHUNK_BYTES } from "../constants";
import {
  drainedOf,
  emitChunks,
  execArgs,
  type Backend,
  type BackendEvents,
  type SpawnSpec,
} from "./backend";
import { endValues, signalNumber, type EndValues } from "./end-event";
import type { Spawner } from "./spawner";

/** Why a command's end is unknown: the spawner that reaps it went away. */
const SPAWNER_GONE = "the agent's spawner exited before the process";

/**
 * Events held until the caller has subscribed: the spawner's streams can
 * deliver output before its start line, and a failed start reports at once,
 * while a ManagedProcess drops what comes before its first subscriber (as
 * with child_process, whose events can only come after spawn returned).
 */
function gate(events: BackendEvents): BackendEvents & { open(): void } {
  let held: (() => void)[] | undefined = [];
  const run = (f: () => void) => (held ? held.push(f) : f());
  return {
    onOutput: (kind, chunk) => run(() => events.onOutput(kind, chunk)),
    onEnd: (end) => run(() => events.onEnd(end)),
    open() {
      // After the microtasks that attach the process and subscribe its first stream.
      setImmediate(() => {
        const queued = held ?? [];
        held = undefined;
        for (const f of queued) f();
      });
    },
  };
}

/** Starts `spec` with pipes through `spawner`. */
export async function spawnThroughSpawner(
  spawner: Spawner,
  spec: SpawnSpec,
  outer: BackendEvents,
): Promise<Backend> {
  const events = gate(outer);
  const [file, args] = execArgs(spec);
  const outs: Socket[] = [];
  let closedOuts = 0;
  let stdin: Socket | undefined;
  const pendingInput: Uint8Array[] = [];
  let stdinOpen = spec.stdin;
  let exit: EndValues | undefined;
  let signalled = false;
  let ended = false;
  let markReaped!: () => void;
  const reaped = new Promise<void>((resolve) => (markReaped = resolve));
  const maybeFinish = () => {
    if (ended || !exit || closedOuts < 2) return;
    ended = true;
    stdin?.destroy();
    events.onEnd(exit);
  };
  const result = await spawner.spawn(
    { file, args, env: spec.env, cwd: spec.cwd, uid: spec.uid, gid: spec.gid, stdin: spec.stdin },
    {
      onStream(fd, socket) {
        if (ended) {
          socket.destroy();
        } else if (fd === 0) {
          stdin = socket;
          socket.on("error", () => (stdinOpen = false));
          for (const data of pendingInput.splice(0)) socket.write(data);
          if (!stdinOpen) socket.end();
        } else {
          const kind = fd === 1 ? "stdout" : "stderr";
          outs.push(socket);
          socket.on("data", (d: Buffer) => emitChunks(kind, d, PIPE_CHUNK_BYTES, events));
          socket.once("close", () => {
            closedOuts++;
            maybeFinish();
          });
          if (exit && signalled) socket.destroy();
        }
      },
      onExit(code, signal) {
        const gone = code === null && signal === null;
        exit = gone
          ? { exitCode: -1, exited: false, status: SPAWNER_GONE, error: SPAWNER_GONE }
          : endValues(code, signal);
        markReaped();
        // envd stops the output readers at once after SendSignal, so a background
        // child holding the streams does not delay `end`.
        if (signalled || gone) for (const s of outs) s.destroy();
        if (gone) closedOuts = 2;
        maybeFinish();
      },
    },
  );
  events.open();
  if ("error" in result) {
    // As child_process reports a failed spawn: its message on stderr, then the end.
    const message = `spawn ${file} ${result.error}`;
    markReaped();
    ended = true;
    events.onOutput("stderr", Buffer.from(`${message}\n`));
    events.onEnd({ exitCode: -1, exited: false, status: message, error: message });
  }
  const id = "id" in result ? result.id : undefined;
  return {
    pid: "pid" in result ? result.pid : 0,
    isPty: false,
    write(data) {
      if (!stdinOpen || ended) return false;
      if (stdin && stdin.destroyed) return false;
      if (stdin) stdin.write(data);
      else pendingInput.push(data);
      return true;
    },
    drained: () => drainedOf(stdin),
    closeStdin() {
      if (stdinOpen && stdin) stdin.end();
      stdinOpen = false;
    },
    resize() {
      throw new Error("tty not assigned");
    },
    kill(signal) {
      signalled = true;
      if (id !== undefined && !exit) spawner.kill(id, signalNumber(signal));
    },
    reaped,
  };
}
