/**
 * A pipes {@link Backend} over the agent's spawner (spawner.ts): the same
 * streams, end and signals as the child_process one in backend.ts.
 *
 * @module
 */
import { PIPE_CHUNK_BYTES } from "../constants";
import { drainedOf } from "../../wire/stdin-stream-serve";
import { emitChunks, execArgs, type Backend, type BackendEvents, type SpawnSpec } from "./backend";
import { endValues, signalNumber, type EndValues } from "./end-event";
import type { CommandStreams, Spawner } from "./spawner";

/** Why a command's end is unknown: the spawner that reaps it went away. */
const SPAWNER_GONE = "the agent's spawner exited before the process";

/**
 * Events held until the caller has subscribed: a failed start reports at
 * once, and output read before the Start stream subscribes would be lost,
 * while a ManagedProcess drops what comes before its first subscriber.
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
  let closedOuts = 0;
  let streams: CommandStreams | undefined;
  let stdinOpen = spec.stdin;
  let exit: EndValues | undefined;
  let signalled = false;
  let ended = false;
  let markReaped!: () => void;
  const reaped = new Promise<void>((resolve) => (markReaped = resolve));
  const maybeFinish = () => {
    if (ended || !exit || closedOuts < 2) return;
    ended = true;
    streams?.stdin?.destroy();
    events.onEnd(exit);
  };
  const result = await spawner.spawn(
    { file, args, env: spec.env, cwd: spec.cwd, uid: spec.uid, gid: spec.gid, stdin: spec.stdin },
    {
      onStart(started) {
        streams = started;
        for (const [kind, socket] of [
          ["stdout", started.stdout],
          ["stderr", started.stderr],
        ] as const) {
          socket.on("error", () => socket.destroy());
          socket.on("data", (d: Buffer) => emitChunks(kind, d, PIPE_CHUNK_BYTES, events));
          socket.once("close", () => {
            closedOuts++;
            maybeFinish();
          });
        }
        if (started.stdin) started.stdin.on("error", () => (stdinOpen = false));
        else stdinOpen = false;
      },
      onExit(code, signal) {
        const gone = code === null && signal === null;
        exit = gone
          ? { exitCode: -1, exited: false, status: SPAWNER_GONE, error: SPAWNER_GONE }
          : endValues(code, signal);
        markReaped();
        // envd stops the output readers at once after SendSignal, so a background
        // child holding the pipes does not delay `end`.
        if (streams && (signalled || gone)) {
          streams.stdout.destroy();
          streams.stderr.destroy();
        }
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
      const stdin = streams?.stdin;
      if (!stdinOpen || ended || !stdin || stdin.destroyed) return false;
      stdin.write(data);
      return true;
    },
    drained: () => drainedOf(streams?.stdin ?? undefined),
    stdinFull: () => streams?.stdin?.writableNeedDrain === true,
    stdinPipe() {
      const stdin = streams?.stdin;
      if (!stdinOpen || ended || !stdin || stdin.destroyed || stdin.writableLength > 0)
        return undefined;
      return streams?.stdinFd;
    },
    closeStdin() {
      if (stdinOpen) streams?.stdin?.end();
      stdinOpen = false;
    },
    resize() {
      throw new Error("tty not assigned");
    },
    kill(signal) {
      signalled = true;
      if (id !== undefined && !exit) spawner.kill(id, signalNumber(signal));
      else if (exit && streams) {
        streams.stdout.destroy();
        streams.stderr.destroy();
      }
    },
    reaped,
  };
}
