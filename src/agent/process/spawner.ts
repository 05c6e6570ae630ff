/**
 * Commands started through the spawner (`native/spawner`, from spawner.c): a
 * small process the agent starts once and keeps, which vforks each command.
 * Forking the agent itself copies the page tables of its ~60 MiB heap and
 * costs write-protect faults afterwards: that was most of the CPU of a
 * `commands.run("true")`.
 *
 * A command's stdio are pipes, as envd's (Go's os/exec) are, never the unix
 * socket pairs libuv gives a child_process child: a command that opens
 * `/dev/stdout`, `/dev/stderr` or `/dev/stdin` (`echo hi > /dev/stderr`,
 * `tee /dev/stderr`, `cat /dev/stdin`) gets ENXIO on a socket. Node cannot
 * make a pipe or receive one over a socket, so the spawner makes them and the
 * agent opens its ends by path, `/proc/<spawner>/fd/<n>`, which opens a pipe
 * as a FIFO: the same pipe, with an open file of the agent's own.
 *
 * Protocol (agent ↔ spawner, both inside the sandbox, both root there; the
 * framing and event lines are src/wire/spawner-protocol.ts, shared with the
 * service's host spawner):
 * - requests on the spawner's stdin: a 4-byte little-endian length, then
 *   NUL-terminated fields: `S id uid gid stdin cwd file argc argv… env…`
 *   starts a command, `K id signal` signals one the spawner has not reaped,
 *   `C id` closes the spawner's copies of the agent's ends of its pipes;
 * - events on its stdout, one line each: `S id pid out err in` started, with
 *   the spawner's fd numbers of the agent's ends of stdout, stderr and stdin
 *   (-1 without stdin); `F id errno` not started; `X id waitstatus` exited
 *   and reaped. `S` comes before `X`, and the spawner holds the pipe ends
 *   until `C`, so the agent opens them even after a quick exit. Between `S`
 *   and `C` the spawner starts nothing (a vfork child there would make the
 *   `/proc/<spawner>/fd` opens fail, spawner.c): every `S` must get its `C`.
 *
 * @module
 */
import { spawn as spawnChild, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import { constants } from "node:os";
import * as nodePath from "node:path";
import { SandboxIacError } from "../../errors";
import {
  errnoName,
  exitOfWaitStatus,
  openCommandPipes,
  spawnerFrame,
  SpawnerEventLines,
  type CommandPipes,
} from "../../wire/spawner-protocol";
import type { SpawnSpec } from "./backend";

/** The spawner's place beside the bundled `agent.js` (scripts/bundle-agent.js builds it). */
const SPAWNER_PATH = nodePath.join(__dirname, "native", "spawner");

/** What the spawner needs to start a command: a {@link SpawnSpec} whose program is an absolute path, never on a PTY. */
type SpawnRequest = Omit<SpawnSpec, "cmd" | "pty"> & { file: string };

/** The agent's ends of a started command's pipes. */
export type CommandStreams = CommandPipes;

/** Callbacks of one command started through the spawner. */
interface SpawnerHandlers {
  /**
   * The command started; called before {@link Spawner.spawn} resolves and
   * before its exit can be reported (which may come in the same read).
   */
  onStart(streams: CommandStreams): void;
  /** The command exited and was reaped (`null` when the spawner itself went away). */
  onExit(code: number | null, signal: number | null): void;
}

/** A started command (its id for {@link Spawner.kill}), or the errno name it failed to start with. */
type SpawnResult = { id: string; pid: number } | { error: string };

interface Entry {
  handlers: SpawnerHandlers;
  settle?: ((r: SpawnResult) => void) | undefined;
}

class Spawner {
  private readonly entries = new Map<string, Entry>();
  private nextId = 1;
  private readonly events = new SpawnerEventLines();
  private gone = false;

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.setEncoding("latin1");
    child.stdout!.on("data", (text: string) => this.onEvents(text));
    child.once("exit", () => this.shutdown());
    child.once("error", () => this.shutdown());
    child.stdin!.on("error", () => this.shutdown());
  }

  /** Starts the spawner; undefined when the binary is absent. */
  static start(): Spawner | undefined {
    if (!fs.existsSync(SPAWNER_PATH)) return undefined;
    const child = spawnChild(SPAWNER_PATH, [], { stdio: ["pipe", "pipe", "inherit"] });
    child.unref();
    for (const s of [child.stdin, child.stdout] as unknown as { unref?: () => void }[]) s.unref?.();
    return new Spawner(child);
  }

  get alive(): boolean {
    return !this.gone;
  }

  /** Starts `req`; resolves once the spawner reports the pid or the failure. */
  spawn(req: SpawnRequest, handlers: SpawnerHandlers): Promise<SpawnResult> {
    const id = String(this.nextId++);
    const env = Object.entries(req.env).map(([k, v]) => `${k}=${v}`);
    const fields = [
      "S",
      id,
      String(req.uid),
      String(req.gid),
      req.stdin ? "1" : "0",
      req.cwd,
      req.file,
      String(req.args.length + 1),
      req.file,
      ...req.args,
      ...env,
    ];
    return new Promise((resolve) => {
      this.entries.set(id, { handlers, settle: resolve });
      this.send(fields);
    });
  }

  /** Signals command `id` unless the spawner has reaped it already. */
  kill(id: string, signal: number): void {
    this.send(["K", id, String(signal)]);
  }

  private send(fields: string[]): void {
    if (this.gone) return;
    this.child.stdin!.write(spawnerFrame(fields));
  }

  /** The agent's ends of a started command's pipes, from the spawner's fd numbers. */
  private openStreams(id: string, fds: number[]): CommandStreams | { error: string } {
    try {
      return openCommandPipes(this.child.pid!, fds);
    } catch (err) {
      // Output nobody could read: the command must not run on unwatched.
      this.kill(id, constants.signals.SIGKILL);
      return { error: (err as NodeJS.ErrnoException).code ?? String(err) };
    } finally {
      this.send(["C", id]);
    }
  }

  private onEvents(text: string): void {
    for (const { kind, id, value: n, rest: fds } of this.events.push(text)) {
      const entry = this.entries.get(id);
      if (!entry) {
        // Nobody waits for this command: stop it, and let the spawner start the next.
        if (kind === "S" && id !== "") {
          this.kill(id, constants.signals.SIGKILL);
          this.send(["C", id]);
        }
        continue;
      }
      if (kind === "S") {
        const streams = this.openStreams(id, fds.map(Number));
        if ("error" in streams) {
          // Its exit (after the SIGKILL) is of no interest any more.
          this.entries.delete(id);
          entry.settle?.(streams);
        } else {
          entry.handlers.onStart(streams);
          entry.settle?.({ id, pid: n });
        }
        entry.settle = undefined;
      } else if (kind === "F") {
        this.entries.delete(id);
        entry.settle?.({ error: errnoName(n) });
      } else if (kind === "X") {
        this.entries.delete(id);
        const { code, signal } = exitOfWaitStatus(n);
        entry.handlers.onExit(code, signal);
      }
    }
  }

  /** The spawner is gone: its commands' exits can no longer be known. */
  private shutdown(): void {
    if (this.gone) return;
    this.gone = true;
    for (const [id, entry] of this.entries) {
      this.entries.delete(id);
      if (entry.settle) entry.settle({ error: "ESRCH" });
      else entry.handlers.onExit(null, null);
    }
  }
}

let shared: Spawner | undefined;

/**
 * The agent's spawner, started on first use and again if it went away.
 * Fails when this agent was built without one (scripts/bundle-agent.js
 * refuses to build without a C compiler): Node alone can give a command no
 * pipes.
 */
export function agentSpawner(): Spawner {
  if (!shared?.alive) {
    shared = Spawner.start();
    if (!shared) {
      throw new SandboxIacError(
        "internal",
        `the agent has no spawner at ${SPAWNER_PATH}: build the package again with a C compiler and the static libc (e.g. Debian's build-essential)`,
        { operation: "process.start" },
      );
    }
  }
  return shared;
}

export type { Spawner };
