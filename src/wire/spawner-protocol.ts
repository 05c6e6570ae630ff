/**
 * What the Node side of both spawners shares: the service's host spawner
 * (src/local/runtime/host-spawner.c, driven by host-spawner.ts) and the
 * agent's (src/agent/process/spawner.c, driven by spawner.ts). Each spawner's
 * request kinds and fields are described beside it; this module holds the
 * framing both read (src/wire/spawner-frame.h is the C side), the event lines
 * both write, what a wait status means, and how a command's pipe ends are
 * opened.
 *
 * @module
 */
import * as fs from "node:fs";
import * as net from "node:net";
import { constants } from "node:os";

/** A request as the spawner reads it: a 4-byte little-endian length, then NUL-terminated fields. */
export function spawnerFrame(fields: readonly string[]): Buffer {
  const body = Buffer.from(`${fields.join("\0")}\0`, "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32LE(body.length);
  return Buffer.concat([head, body]);
}

/** One event line of a spawner: `kind id value rest…`, space separated. */
export interface SpawnerEvent {
  /** `S` started, `F` not started, `X` exited. */
  kind: string;
  id: string;
  /** The pid (`S`), the errno (`F`) or the wait status (`X`). */
  value: number;
  /** `S`: the fd numbers of the caller's pipe ends; `F`: a forked start's step and index. */
  rest: string[];
}

/** Splits a spawner's stdout (read as latin1) into events, keeping a line not ended yet for the next read. */
export class SpawnerEventLines {
  private buffered = "";

  /** The events complete once `text` is added. */
  push(text: string): SpawnerEvent[] {
    this.buffered += text;
    const lines = this.buffered.split("\n");
    this.buffered = lines.pop() ?? "";
    return lines.map((line) => {
      const [kind = "", id = "", value, ...rest] = line.split(" ");
      return { kind, id, value: Number(value), rest };
    });
  }
}

const errnoNames = new Map(
  Object.entries(constants.errno as Record<string, number>).map(([name, n]) => [n, name]),
);

/** The name of errno `n` as an `F` event gives it (`ENOENT`), or `errno <n>` when Node knows none. */
export function errnoName(n: number): string {
  return errnoNames.get(n) ?? `errno ${n}`;
}

/** How a command ended, from the wait status of its `X` event: its exit code, or the signal number. */
export function exitOfWaitStatus(status: number): { code: number | null; signal: number | null } {
  // Low 7 bits the signal, else the exit code in the next byte.
  const signal = status & 0x7f;
  return signal ? { code: null, signal } : { code: (status >> 8) & 0xff, signal: null };
}

/**
 * Opens the caller's own file of the spawner's fd `fd` (a pipe end) through
 * `/proc/<spawner>/fd/<fd>`, which opens a pipe as a FIFO: the same pipe,
 * with an open file of its own. Non-blocking: a FIFO's read side opens at
 * once, and its write side fails with ENXIO when no reader is left.
 */
function openPipeEnd(
  spawnerPid: number,
  fd: number,
  side: "read" | "write",
): { socket: net.Socket; fd: number } {
  const flags =
    (side === "read" ? fs.constants.O_RDONLY : fs.constants.O_WRONLY) | fs.constants.O_NONBLOCK;
  const own = fs.openSync(`/proc/${spawnerPid}/fd/${fd}`, flags);
  try {
    return {
      socket: new net.Socket({ fd: own, readable: side === "read", writable: side === "write" }),
      fd: own,
    };
  } catch (err) {
    fs.closeSync(own);
    throw err;
  }
}

/** The caller's ends of a started command's pipes. */
export interface CommandPipes {
  stdout: net.Socket;
  stderr: net.Socket;
  /** Undefined without stdin, or when the command had closed its stdin before it was opened. */
  stdin: net.Socket | undefined;
  /** The caller's descriptor of {@link stdin}'s pipe end (the agent hands it to the service's direct stdin). */
  stdinFd: number | undefined;
}

/**
 * Opens the caller's ends of a started command's pipes from the spawner's fd
 * numbers in its `S` event (stdout, stderr, stdin or -1). Throws the open's
 * error with nothing left open; the caller then kills the command, whose
 * output nobody could read. Either way the caller sends `C` after.
 */
export function openCommandPipes(spawnerPid: number, fds: readonly number[]): CommandPipes {
  const opened: net.Socket[] = [];
  try {
    const stdout = openPipeEnd(spawnerPid, fds[0] ?? -1, "read").socket;
    opened.push(stdout);
    const stderr = openPipeEnd(spawnerPid, fds[1] ?? -1, "read").socket;
    opened.push(stderr);
    let stdin: { socket: net.Socket; fd: number } | undefined;
    if ((fds[2] ?? -1) >= 0) {
      try {
        stdin = openPipeEnd(spawnerPid, fds[2] ?? -1, "write");
      } catch (err) {
        // ENXIO: no reader left, the command closed its stdin (or exited) already.
        if ((err as NodeJS.ErrnoException).code !== "ENXIO") throw err;
      }
    }
    return { stdout, stderr, stdin: stdin?.socket, stdinFd: stdin?.fd };
  } catch (err) {
    for (const s of opened) s.destroy();
    throw err;
  }
}
