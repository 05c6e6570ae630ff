/**
 * The handle of a started or connected process: its pid, its events as an
 * async iterable (keepalives hidden), and `wait()` for the collected result.
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { ProcessEvent as PbProcessEvent } from "../../gen/envd/process/process_pb";
import { SandboxIacError } from "../../errors";
import type { CommandResult } from "./errors";
import { fromRpcError, type ErrorScope } from "./errors";

/** Output of a process: stdout or stderr of a pipe process, or the terminal of a PTY. */
export interface ProcessOutputEvent {
  type: "stdout" | "stderr" | "pty";
  /** The raw bytes, at most 32 KiB per event (16 KiB for a PTY). */
  data: Uint8Array;
}

/** The last event: the process ended. */
export interface ProcessEndEvent {
  type: "end";
  /** The exit code; -1 when killed by a signal. */
  exitCode: number;
  /** True for a normal exit, false for death by a signal. */
  exited: boolean;
  /** envd's status text, e.g. `exit status 1` or `signal: killed`. */
  status: string;
  /** Set when the process failed (non-zero exit or signal). */
  error: string | undefined;
}

/** An event of a process stream. */
export type ProcessEvent = ProcessOutputEvent | ProcessEndEvent;

/** The full outcome of a process, as returned by `wait()`. */
export interface ProcessResult extends CommandResult {
  /** True for a normal exit, false for death by a signal. */
  exited: boolean;
  /** envd's status text, e.g. `exit status 1` or `signal: killed`. */
  status: string;
  /** Set when the process failed (non-zero exit or signal). */
  error: string | undefined;
}

/** Options of {@link ProcessHandle.wait}. */
export interface WaitOptions {
  /**
   * Called with each piece of stdout (or terminal output) as it arrives,
   * decoded as UTF-8 across chunk boundaries; the pieces add up to the result's `stdout`.
   * @default none
   */
  onStdout?: ((text: string) => void) | undefined;
  /**
   * Called with each piece of stderr as it arrives, decoded as UTF-8; the
   * pieces add up to the result's `stderr`.
   * @default none
   */
  onStderr?: ((text: string) => void) | undefined;
}

/** A running (or just finished) process. */
export interface ProcessHandle extends AsyncIterable<ProcessEvent> {
  /** The process id inside the sandbox. */
  readonly pid: number;
  /**
   * Waits for the end and returns the exit code and collected output. A
   * non-zero exit is a value here, not an error (`run()` turns it into one).
   * Fails with `timeout` when the call's timeoutMs expired first. Output
   * callbacks need `wait()` to read the events itself: with them, it fails
   * with `conflict` when the handle is already being iterated.
   */
  wait(options?: WaitOptions): Promise<ProcessResult>;
  /** Stops receiving events; the process keeps running (reattach with `connect`). */
  disconnect(): void;
}

/** Maps one protobuf event; undefined for keepalives and empty members. */
function toProcessEvent(pb: PbProcessEvent): ProcessEvent | "start" | undefined {
  const e = pb.event;
  switch (e.case) {
    case "start":
      return "start";
    case "data":
      if (e.value.output.case === undefined) return undefined;
      return { type: e.value.output.case, data: e.value.output.value };
    case "end":
      return {
        type: "end",
        exitCode: e.value.exitCode,
        exited: e.value.exited,
        status: e.value.status,
        error: e.value.error,
      };
    default:
      return undefined;
  }
}

/**
 * Reads the first message of a Start/Connect stream, which must be `start`,
 * and returns the handle. `controller` aborts the underlying request.
 */
export async function openProcessHandle(
  stream: AsyncIterable<{ event?: PbProcessEvent | undefined }>,
  controller: AbortController,
  scope: ErrorScope,
  onSettled: () => void,
): Promise<ProcessHandle> {
  const iterator = stream[Symbol.asyncIterator]();
  let pid: number;
  try {
    const first = await iterator.next();
    const event = first.done ? undefined : first.value.event?.event;
    if (event?.case !== "start") {
      throw new ConnectError(
        `the process stream began with ${event?.case ?? "nothing"} instead of start`,
        Code.Internal,
      );
    }
    pid = event.value.pid;
  } catch (err) {
    onSettled();
    controller.abort();
    throw fromRpcError(err, scope);
  }
  const errScope: ErrorScope = { ...scope, resourceId: `pid ${pid}` };
  const stdout: Uint8Array[] = [];
  const stderr: Uint8Array[] = [];
  let end: ProcessEndEvent | undefined;
  let consumed = false;
  let disconnected = false;
  let settle: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // wait() may never be called when the caller only iterates; keep Node quiet.
  done.catch(() => undefined);

  async function* events(): AsyncGenerator<ProcessEvent> {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        const mapped = next.value.event ? toProcessEvent(next.value.event) : undefined;
        if (mapped === undefined || mapped === "start") continue;
        if (mapped.type === "end") end = mapped;
        else if (mapped.type === "stderr") stderr.push(mapped.data);
        else stdout.push(mapped.data);
        yield mapped;
      }
      if (!end && !disconnected) {
        throw new ConnectError("the process stream ended without an end event", Code.Internal);
      }
      settle?.resolve();
    } catch (err) {
      const mapped = disconnected ? undefined : fromRpcError(err, errScope);
      if (mapped) settle?.reject(mapped);
      else settle?.resolve();
      if (mapped) throw mapped;
    } finally {
      onSettled();
      controller.abort();
    }
  }

  function consume(): AsyncGenerator<ProcessEvent> {
    if (consumed) {
      throw new SandboxIacError(
        "conflict",
        "the events of this process are already being read: iterate the handle once, or call wait() instead",
        {
          operation: scope.operation,
          resourceId: `pid ${pid}`,
        },
      );
    }
    consumed = true;
    return events();
  }

  const decoder = () => new TextDecoder("utf-8");
  return {
    pid,
    [Symbol.asyncIterator]: consume,
    async wait(options = {}) {
      const { onStdout, onStderr } = options;
      if (onStdout || onStderr) {
        // Decoded per stream as it comes; the result decodes the collected bytes alike.
        const live = { stdout: decoder(), stderr: decoder() };
        const emit = (stream: "stdout" | "stderr", text: string) => {
          if (text) (stream === "stdout" ? onStdout : onStderr)?.(text);
        };
        for await (const event of consume()) {
          if (event.type === "end") continue;
          const stream = event.type === "stderr" ? "stderr" : "stdout";
          emit(stream, live[stream].decode(event.data, { stream: true }));
        }
        emit("stdout", live.stdout.decode());
        emit("stderr", live.stderr.decode());
      } else if (!consumed) {
        for await (const _ of consume()) {
          // Draining collects the output into stdout/stderr.
        }
      } else {
        await done;
      }
      if (!end) {
        throw fromRpcError(
          new ConnectError("disconnected before the process ended", Code.Canceled),
          errScope,
        );
      }
      return {
        exitCode: end.exitCode,
        exited: end.exited,
        status: end.status,
        error: end.error,
        stdout: decoder().decode(Buffer.concat(stdout)),
        stderr: decoder().decode(Buffer.concat(stderr)),
      };
    },
    disconnect() {
      disconnected = true;
      controller.abort();
    },
  };
}
