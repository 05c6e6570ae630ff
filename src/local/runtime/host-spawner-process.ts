/**
 * The host spawner's process as the service sees it (host-spawner.ts says
 * why there is one, and how it and its commands die): {@link HostSpawner}
 * starts it, frames each request onto its stdin, reads its events, and
 * settles each command's start and exit, all of them at once when it goes
 * away. Its own file because it is the service's end of the protocol below,
 * apart from the one shared spawner and the calls the runtime makes.
 *
 * Protocol (service ↔ spawner, both host root; the framing and event lines
 * are src/wire/spawner-protocol.ts):
 * - requests on the spawner's stdin: a 4-byte little-endian length, then
 *   NUL-terminated fields: `S id stdin nfds fd… file argc argv… env…` starts
 *   a command (`stdin` "1" for a pipe, "0" for /dev/null; each `fd` is
 *   `L<path>`, a unix socket listening on path, or `R<path>`, a file opened
 *   read-only, given as descriptors 3, 4, …), `K id signal` signals one the
 *   spawner has not reaped, `C id` closes the spawner's copies of the
 *   service's ends of its pipes; `L id stdin nfds fd… holder idBase nofile
 *   oomScoreAdj usernsFd ncgroups cgroupProcs… file argc argv… env…` starts
 *   a sandbox's launch: `S` plus the steps its child takes before the exec
 *   (host-launch.ts); `H id stdin nfds fd… idBase file argc argv… env…`
 *   starts a sandbox's namespace holder: `S` plus the steps that make its
 *   namespaces as host uid idBase (host-holder.ts);
 * - events on its stdout, one line each: `S id pid out err in` started, with
 *   the spawner's fd numbers of the service's ends of stdout, stderr and
 *   stdin (-1 without stdin); `F id errno` not started (`F id errno step
 *   index` for a launch or a holder: the step that failed); `X id
 *   waitstatus` exited and reaped. `S` comes before `X`, and the spawner
 *   holds the pipe ends until `C`, so the service opens them even after a
 *   quick exit.
 *
 * @module
 */
import { spawn as spawnChild, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import { constants } from "node:os";
import * as path from "node:path";
import type { Readable, Writable } from "node:stream";
import {
  errnoName,
  exitOfWaitStatus,
  openCommandPipes,
  spawnerFrame,
  SpawnerEventLines,
} from "../../wire/spawner-protocol";
import { agentBundleDirOnHost } from "../agent-launch";
import { holderFields, type HostHolder } from "./host-holder";
import { launchFields, type HostLaunch } from "./host-launch";

/** The spawner's place beside `dist/agent` (scripts/build-host-spawner.js builds it). */
export const SPAWNER_PATH = path.join(
  path.dirname(agentBundleDirOnHost()),
  "native",
  "host-spawner",
);

/** How a command ended: its exit code, or the signal that killed it. */
interface HostExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A descriptor made for the command (3, 4, … in order). */
export type HostFd = { listen: string } | { read: string };

/** How to start a host command. */
export interface HostSpawnOptions {
  /** @default process.env */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** A pipe on stdin (else /dev/null). @default false */
  stdin?: boolean | undefined;
  /** Descriptors 3, 4, … of the command. @default none */
  fds?: readonly HostFd[] | undefined;
  /** Enter a sandbox before the exec (the command is its bwrap). @default a plain command */
  launch?: HostLaunch | undefined;
  /** Become a sandbox's namespace holder before the exec (the command is its sleep). @default a plain command */
  holder?: HostHolder | undefined;
}

/** A command started through the spawner. */
export interface HostChild {
  pid: number;
  stdout: Readable;
  stderr: Readable;
  /** Undefined without `stdin`, or when the command had closed its stdin already. */
  stdin: Writable | undefined;
  /** Resolves once the command exited and was reaped (or died with the spawner). */
  exited: Promise<HostExit>;
  /** Signals the command unless it was reaped already. @default SIGKILL */
  kill(signal?: NodeJS.Signals): void;
}

/** Why a command did not start: an errno name (or the spawner's failure), and a launch's failed step. */
interface StartFailure {
  errno: string;
  step?: string | undefined;
  /** Which cgroup, for the step `cgroup`. */
  index: number;
  /** The spawner went away before it answered (it may not have read the request). */
  spawnerGone?: true;
}

/** The failure of a start that did not get as far as the spawner's answer. */
function notStarted(errno: string, spawnerGone?: true): StartFailure {
  return spawnerGone ? { errno, index: 0, spawnerGone } : { errno, index: 0 };
}

interface Entry {
  start: (r: { pid: number; fds: number[] } | StartFailure) => void;
  exit?: ((e: HostExit) => void) | undefined;
}

const signalNames = new Map(
  Object.entries(constants.signals as Record<string, number>).map(([name, n]) => [n, name]),
);

/**
 * One spawner process: the commands it was asked to start, until each is
 * reaped or the spawner is gone.
 */
export class HostSpawner {
  private readonly entries = new Map<string, Entry>();
  private nextId = 1;
  private readonly events = new SpawnerEventLines();
  private stderr = "";
  private gone = false;

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.setEncoding("latin1");
    child.stdout!.on("data", (text: string) => this.onEvents(text));
    child.stderr!.on("data", (d: Buffer) => (this.stderr = (this.stderr + String(d)).slice(-2000)));
    // New commands go to a new spawner at once; those of this one are settled once its last
    // events are read (an exit reported just before it died is still an exit).
    child.once("exit", () => (this.gone = true));
    child.stdout!.once("close", () => this.shutdown());
    child.once("error", () => this.shutdown());
    child.stdin!.on("error", () => (this.gone = true));
    child.unref();
    // Only a running command keeps the service's event loop alive (stdout, see refWhileBusy).
    for (const s of [child.stdin, child.stderr] as unknown as { unref(): void }[]) s.unref();
    this.refWhileBusy();
  }

  /** Starts a spawner; undefined when the binary is absent. */
  static start(): HostSpawner | undefined {
    if (!fs.existsSync(SPAWNER_PATH)) return undefined;
    return new HostSpawner(
      spawnChild(SPAWNER_PATH, [String(process.pid)], { stdio: ["pipe", "pipe", "pipe"] }),
    );
  }

  /** False once the spawner exited (or its stdin failed): new commands go to a new one. */
  get alive(): boolean {
    return !this.gone;
  }

  /** The spawner's pid: the parent of every command it starts. */
  get pid(): number {
    return this.child.pid!;
  }

  /** Starts `file`; resolves with the started command, or why it did not start. */
  spawn(
    file: string,
    args: readonly string[],
    opts: HostSpawnOptions,
  ): Promise<HostChild | StartFailure> {
    const id = String(this.nextId++);
    const env = Object.entries(opts.env ?? process.env)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${v}`);
    const fds = (opts.fds ?? []).map((f) => ("listen" in f ? `L${f.listen}` : `R${f.read}`));
    const fields = [
      opts.launch ? "L" : opts.holder ? "H" : "S",
      id,
      opts.stdin ? "1" : "0",
      String(fds.length),
      ...fds,
      ...(opts.launch ? launchFields(opts.launch) : opts.holder ? holderFields(opts.holder) : []),
      file,
      String(args.length + 1),
      file,
      ...args,
      ...env,
    ];
    let resolveExit!: (e: HostExit) => void;
    const exited = new Promise<HostExit>((r) => (resolveExit = r));
    if (this.gone) return Promise.resolve(notStarted(this.why(), true));
    return new Promise((resolve) => {
      const entry: Entry = {
        start: (r) => {
          if ("errno" in r) return resolve(r);
          const streams = this.openStreams(id, r.fds);
          if ("error" in streams) return resolve(notStarted(streams.error));
          entry.exit = resolveExit;
          resolve({
            pid: r.pid,
            ...streams,
            exited,
            kill: (signal = "SIGKILL") => this.send(["K", id, String(constants.signals[signal])]),
          });
        },
      };
      this.entries.set(id, entry);
      this.refWhileBusy();
      this.send(fields);
    });
  }

  private send(fields: string[]): void {
    if (this.gone) return;
    this.child.stdin!.write(spawnerFrame(fields));
  }

  /** Keeps the service's event loop alive while a command runs (as a child_process child would). */
  private refWhileBusy(): void {
    const out = this.child.stdout as unknown as { ref(): void; unref(): void };
    if (this.entries.size > 0) out.ref();
    else out.unref();
  }

  /** The service's ends of a started command's pipes, from the spawner's fd numbers. */
  private openStreams(
    id: string,
    fds: number[],
  ): Pick<HostChild, "stdout" | "stderr" | "stdin"> | { error: string } {
    try {
      const pipes = openCommandPipes(this.pid, fds);
      // A command that exits without reading all of its input is not an error here.
      pipes.stdin?.on("error", () => undefined);
      return pipes;
    } catch (err) {
      // Output nobody could read: the command must not run on unwatched.
      this.send(["K", id, String(constants.signals.SIGKILL)]);
      return { error: (err as NodeJS.ErrnoException).code ?? String(err) };
    } finally {
      this.send(["C", id]);
    }
  }

  private onEvents(text: string): void {
    for (const { kind, id, value, rest } of this.events.push(text)) {
      const entry = this.entries.get(id);
      if (!entry) continue;
      if (kind === "S") {
        entry.start({ pid: value, fds: rest.map(Number) });
        // Not started after all (its streams could not be opened): its exit is of no interest.
        if (!entry.exit) this.entries.delete(id);
      } else if (kind === "F") {
        this.entries.delete(id);
        entry.start({ errno: errnoName(value), step: rest[0], index: Number(rest[1] ?? 0) });
      } else if (kind === "X") {
        this.entries.delete(id);
        const { code, signal } = exitOfWaitStatus(value);
        entry.exit?.({
          code,
          signal: signal ? ((signalNames.get(signal) ?? "SIGKILL") as NodeJS.Signals) : null,
        });
      }
    }
    this.refWhileBusy();
  }

  private why(): string {
    return `the host spawner exited${this.stderr.trim() ? ` (${this.stderr.trim()})` : ""}`;
  }

  /** The spawner is gone: its commands died with it (their parent-death signal). */
  private shutdown(): void {
    this.gone = true;
    const why = this.why();
    for (const [id, entry] of this.entries) {
      this.entries.delete(id);
      if (entry.exit) entry.exit({ code: null, signal: "SIGKILL" });
      else entry.start(notStarted(why, true));
    }
    this.refWhileBusy();
  }
}
