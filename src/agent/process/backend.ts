/**
 * The two ways a process runs: with pipes (through the agent's spawner,
 * spawner-backend.ts) or on a PTY (node-pty, here). Both report output chunks
 * and one exit.
 *
 * @module
 */
import * as fs from "node:fs";
import { PTY_CHUNK_BYTES, SHELL_WRAPPER } from "../constants";
import { endValues, type EndValues } from "./end-event";

/** Where output goes. */
export type OutputKind = "stdout" | "stderr" | "pty";

/** How to start a process. */
export interface SpawnSpec {
  cmd: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  uid: number;
  gid: number;
  /** Give the process a stdin pipe; otherwise stdin is /dev/null. */
  stdin: boolean;
  /** Run on a PTY of this size. @default undefined (pipes) */
  pty?: { cols: number; rows: number } | undefined;
}

/** Callbacks of a running backend. */
export interface BackendEvents {
  onOutput(kind: OutputKind, chunk: Buffer): void;
  /** Called once, after the process is reaped and its output drained. */
  onEnd(end: EndValues): void;
}

/** A running process as the registry sees it. */
export interface Backend {
  readonly pid: number;
  readonly isPty: boolean;
  /** Writes to stdin (pipe) or the PTY. @returns false when input is closed. */
  write(data: Uint8Array): boolean;
  /**
   * Settles once the stdin pipe has taken what was written (or is gone), so a
   * stream of input waits for the process instead of queueing in the agent.
   * @default settled at once (a PTY's input is typed, never bulk)
   */
  drained?(): Promise<void>;
  /** True while stdin holds writes the pipe has not taken (then wait for {@link drained}). */
  stdinFull?(): boolean;
  /**
   * The agent's descriptor of the stdin pipe, for the service to write into
   * directly (src/wire/direct-stdin.ts); undefined when there is none (a PTY,
   * no stdin, closed) or writes of the agent's own still wait on it, which
   * the service's would overtake.
   * @default undefined: input goes through {@link write}
   */
  stdinPipe?(): number | undefined;
  /** Closes the stdin pipe; a no-op when already closed or absent. */
  closeStdin(): void;
  resize(cols: number, rows: number): void;
  kill(signal: "SIGTERM" | "SIGKILL"): void;
  /** Settles once the process itself has exited and been reaped (its output may still flow). */
  readonly reaped: Promise<void>;
}

/**
 * The shells the SDK names for every `commands.run` (`/bin/bash -l -c`). They
 * start without the {@link SHELL_WRAPPER} (one exec less, about 1 ms of each
 * command) when they are a regular file anyone may execute: then the exec
 * cannot fail for a reason the wrapper would report better.
 */
const DIRECT_SHELLS = new Set(["/bin/bash", "/bin/sh", "/usr/bin/bash", "/usr/bin/sh"]);

/** The program and arguments that run `spec`: the shell itself, or the wrapper around the command. */
export function execArgs(spec: Pick<SpawnSpec, "cmd" | "args">): [string, string[]] {
  if (DIRECT_SHELLS.has(spec.cmd)) {
    try {
      const st = fs.statSync(spec.cmd);
      if (st.isFile() && (st.mode & 0o111) === 0o111) return [spec.cmd, spec.args];
    } catch {
      // Missing: the wrapper reports it as the shell would (exit code 127).
    }
  }
  return [SHELL_WRAPPER[0], [...SHELL_WRAPPER.slice(1), spec.cmd, ...spec.args]];
}

/** Reports `data` to `events` in chunks of at most `max` bytes. */
export function emitChunks(
  kind: OutputKind,
  data: Buffer,
  max: number,
  events: BackendEvents,
): void {
  for (let off = 0; off < data.length; off += max)
    events.onOutput(kind, data.subarray(off, off + max));
}

/** The most a final drain of a PTY master reads: a background writer must not hold it forever. */
const PTY_DRAIN_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Output written right before a PTY process exits must reach the caller.
 * node-pty destroys the master 200 ms after the exit unless it has read EIO
 * by then, and on a busy event loop it often has not: whatever the kernel
 * still buffers is dropped. So the master is read here, synchronously (it is
 * non-blocking), until EIO or nothing is left, just before it is destroyed.
 * This reaches into node-pty's private `_socket` and `_fd`; without them
 * (another node-pty version) nothing changes.
 */
function drainBeforeDestroy(term: object, onData: (buf: Buffer) => void): void {
  const t = term as { _socket?: { destroy: (...args: unknown[]) => unknown }; _fd?: unknown };
  const socket = t._socket;
  const fd = t._fd;
  if (!socket || typeof socket.destroy !== "function" || typeof fd !== "number") return;
  const destroy = socket.destroy.bind(socket);
  let drained = false;
  socket.destroy = (...args: unknown[]) => {
    if (!drained) {
      drained = true;
      const buf = Buffer.alloc(64 * 1024);
      for (let total = 0; total < PTY_DRAIN_MAX_BYTES;) {
        let n: number;
        try {
          n = fs.readSync(fd, buf, 0, buf.length, null);
        } catch {
          break; // EAGAIN: nothing left; EIO: the slave side is closed
        }
        if (n <= 0) break;
        total += n;
        onData(Buffer.from(buf.subarray(0, n)));
      }
    }
    return destroy(...args);
  };
}

/** Starts `spec` on a PTY (node-pty, loaded lazily: it is a native addon). */
export function spawnPty(spec: SpawnSpec, events: BackendEvents): Backend {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pty = require("node-pty") as typeof import("node-pty");
  const size = spec.pty ?? { cols: 80, rows: 24 };
  const [file, args] = execArgs(spec);
  const term = pty.spawn(file, args, {
    name: spec.env.TERM ?? "xterm-256color",
    cols: size.cols || 80,
    rows: size.rows || 24,
    cwd: spec.cwd,
    env: spec.env,
    uid: spec.uid,
    gid: spec.gid,
    encoding: null,
  });
  let open = true;
  let markReaped!: () => void;
  const reaped = new Promise<void>((resolve) => (markReaped = resolve));
  term.onData((d: string | Buffer) => {
    const buf = typeof d === "string" ? Buffer.from(d) : d;
    emitChunks("pty", buf, PTY_CHUNK_BYTES, events);
  });
  drainBeforeDestroy(term, (buf) => emitChunks("pty", buf, PTY_CHUNK_BYTES, events));
  term.onExit(({ exitCode, signal }) => {
    open = false;
    markReaped();
    events.onEnd(endValues(exitCode, signal || null));
  });
  return {
    pid: term.pid,
    isPty: true,
    write(data) {
      if (!open) return false;
      term.write(Buffer.from(data));
      return true;
    },
    closeStdin() {
      throw new Error("cannot close stdin of a PTY process: send 0x04 (Ctrl-D) instead");
    },
    resize(cols, rows) {
      term.resize(cols, rows);
    },
    kill(signal) {
      try {
        process.kill(term.pid, signal);
      } catch {
        // already gone
      }
    },
    reaped,
  };
}
