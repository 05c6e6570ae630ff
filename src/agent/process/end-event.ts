/**
 * The `end` event values envd derives from Go's `ProcessState`
 * (docs/envd.md#process-behaviour).
 *
 * @module
 */
import { constants } from "node:os";

/** What the end event carries. */
export interface EndValues {
  exitCode: number;
  exited: boolean;
  status: string;
  error?: string;
}

// Go's syscall signal strings for the signals a process is likely to die from.
const GO_SIGNAL_NAMES: Record<number, string> = {
  1: "hangup",
  2: "interrupt",
  3: "quit",
  4: "illegal instruction",
  6: "aborted",
  7: "bus error",
  8: "floating point exception",
  9: "killed",
  10: "user defined signal 1",
  11: "segmentation fault",
  12: "user defined signal 2",
  13: "broken pipe",
  14: "alarm clock",
  15: "terminated",
};

/** The signal number of a Node signal name such as `SIGKILL`. */
export function signalNumber(name: string): number {
  return (constants.signals as Record<string, number>)[name] ?? 0;
}

/** End values for a process that exited with `code`, or died of signal number `signal`. */
export function endValues(code: number | null, signal: number | null): EndValues {
  if (signal) {
    const status = `signal: ${GO_SIGNAL_NAMES[signal] ?? `signal ${signal}`}`;
    return { exitCode: -1, exited: false, status, error: status };
  }
  const n = code ?? 0;
  const status = `exit status ${n}`;
  return n === 0
    ? { exitCode: 0, exited: true, status }
    : { exitCode: n, exited: true, status, error: status };
}
