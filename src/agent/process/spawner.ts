/**
 * Commands started through the spawner (`native/spawner`, from spawner.c): a
 * small process the agent starts once and keeps, which vforks each command.
 * Forking the agent itself copies the page tables of its ~60 MiB heap and
 * costs write-protect faults afterwards: that was most of the CPU of a
 * `commands.run("true")`. The child still gets unix stream sockets for its
 * stdio, as libuv gives a child_process child.
 *
 * Protocol (agent ↔ spawner, both inside the sandbox, both root there):
 * - requests on the spawner's stdin: a 4-byte little-endian length, then
 *   NUL-terminated fields: `S id uid gid stdin cwd token file argc argv… env…`
 *   starts a command, `K id signal` signals one the spawner has not reaped;
 * - events on its stdout, one line each: `S id pid` started, `F id errno`
 *   not started, `X id waitstatus` exited and reaped;
 * - each stdio stream of a command is a connection to the agent's abstract
 *   unix socket that opens with the command's random token and the stream's
 *   fd number (`0`, `1`, `2`): a process in the sandbox that connects
 *   without a live token is dropped.
 *
 * @module
 */
import { spawn as spawnChild, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import { constants } from "node:os";
import * as nodePath from "node:path";
import type { Socket } from "node:net";
import type { SpawnSpec } from "./backend";

/** The spawner's place beside the bundled `agent.js` (scripts/bundle-agent.js builds it). */
const SPAWNER_PATH = nodePath.join(__dirname, "native", "spawner");

/** Token bytes (hex-encoded on the wire: 32 characters). */
const TOKEN_BYTES = 16;
const HEADER_BYTES = TOKEN_BYTES * 2 + 1;

/** What the spawner needs to start a command: a {@link SpawnSpec} whose program is an absolute path, never on a PTY. */
type SpawnRequest = Omit<SpawnSpec, "cmd" | "pty"> & { file: string };

/** Callbacks of one command started through the spawner. */
interface SpawnerHandlers {
  /** A stdio stream arrived: fd 0 (stdin), 1 (stdout) or 2 (stderr). */
  onStream(fd: 0 | 1 | 2, socket: Socket): void;
  /** The command exited and was reaped (`null` when the spawner itself went away). */
  onExit(code: number | null, signal: number | null): void;
}

/** A started command (its id for {@link Spawner.kill}), or the errno name it failed to start with. */
type SpawnResult = { id: string; pid: number } | { error: string };

interface Entry {
  token: string;
  /** Streams still to come: the spawner connects them before it starts the command. */
  streams: number;
  exited: boolean;
  handlers: SpawnerHandlers;
  settle?: ((r: SpawnResult) => void) | undefined;
}

const errnoNames = new Map(
  Object.entries(constants.errno as Record<string, number>).map(([name, n]) => [n, name]),
);

class Spawner {
  private readonly entries = new Map<string, Entry>();
  private readonly byToken = new Map<string, string>();
  private nextId = 1;
  private buffered = "";
  private gone = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly server: net.Server,
  ) {
    child.stdout!.setEncoding("latin1");
    child.stdout!.on("data", (text: string) => this.onEvents(text));
    child.once("exit", () => this.shutdown());
    child.once("error", () => this.shutdown());
    child.stdin!.on("error", () => this.shutdown());
    server.on("connection", (socket) => this.accept(socket));
  }

  /** Starts the spawner and its socket; undefined when the binary is absent. */
  static start(): Spawner | undefined {
    if (!fs.existsSync(SPAWNER_PATH)) return undefined;
    const name = `sandbox-iac-spawner-${process.pid}-${randomBytes(8).toString("hex")}`;
    const server = net.createServer();
    // Listening on a unix socket binds synchronously: the first command may connect at once.
    server.listen(`\0${name}`);
    server.unref();
    const child = spawnChild(SPAWNER_PATH, [name], { stdio: ["pipe", "pipe", "inherit"] });
    child.unref();
    for (const s of [child.stdin, child.stdout] as unknown as { unref?: () => void }[]) s.unref?.();
    return new Spawner(child, server);
  }

  get alive(): boolean {
    return !this.gone;
  }

  /** Starts `req`; resolves once the spawner reports the pid or the failure. */
  spawn(req: SpawnRequest, handlers: SpawnerHandlers): Promise<SpawnResult> {
    const id = String(this.nextId++);
    const token = randomBytes(TOKEN_BYTES).toString("hex");
    const env = Object.entries(req.env).map(([k, v]) => `${k}=${v}`);
    const fields = [
      "S",
      id,
      String(req.uid),
      String(req.gid),
      req.stdin ? "1" : "0",
      req.cwd,
      token,
      req.file,
      String(req.args.length + 1),
      req.file,
      ...req.args,
      ...env,
    ];
    return new Promise((resolve) => {
      this.entries.set(id, {
        token,
        streams: req.stdin ? 3 : 2,
        exited: false,
        handlers,
        settle: resolve,
      });
      this.byToken.set(token, id);
      this.send(fields);
    });
  }

  /** Signals command `id` unless the spawner has reaped it already. */
  kill(id: string, signal: number): void {
    this.send(["K", id, String(signal)]);
  }

  private send(fields: string[]): void {
    if (this.gone) return;
    const body = Buffer.from(`${fields.join("\0")}\0`, "utf8");
    const head = Buffer.alloc(4);
    head.writeUInt32LE(body.length);
    this.child.stdin!.write(Buffer.concat([head, body]));
  }

  private accept(socket: Socket): void {
    socket.on("error", () => socket.destroy());
    const readHeader = (): void => {
      const header = socket.read(HEADER_BYTES) as Buffer | null;
      if (header === null) return;
      socket.off("readable", readHeader);
      const token = header.subarray(0, TOKEN_BYTES * 2).toString("latin1");
      const fd = header[TOKEN_BYTES * 2] - 0x30;
      const id = this.byToken.get(token);
      const entry = id === undefined ? undefined : this.entries.get(id);
      if (!entry || (fd !== 0 && fd !== 1 && fd !== 2)) {
        socket.destroy();
        return;
      }
      entry.streams--;
      if (entry.streams === 0 && entry.exited) this.forget(id!);
      entry.handlers.onStream(fd, socket);
    };
    socket.on("readable", readHeader);
  }

  private onEvents(text: string): void {
    this.buffered += text;
    let nl: number;
    while ((nl = this.buffered.indexOf("\n")) >= 0) {
      const [kind, id, value] = this.buffered.slice(0, nl).split(" ");
      this.buffered = this.buffered.slice(nl + 1);
      const entry = this.entries.get(id ?? "");
      if (!entry) continue;
      const n = Number(value);
      if (kind === "S") {
        entry.settle?.({ id: id, pid: n });
        entry.settle = undefined;
      } else if (kind === "F") {
        this.forget(id);
        entry.settle?.({ error: errnoNames.get(n) ?? `errno ${n}` });
      } else if (kind === "X") {
        // A stream may still be on its way through the agent's accept queue.
        entry.exited = true;
        if (entry.streams <= 0) this.forget(id);
        // A wait status: low 7 bits the signal, else the exit code in the next byte.
        const signal = n & 0x7f;
        entry.handlers.onExit(signal ? null : (n >> 8) & 0xff, signal || null);
      }
    }
  }

  /** Drops command `id`: its token no longer admits a stream. */
  private forget(id: string): void {
    const entry = this.entries.get(id);
    if (entry) this.byToken.delete(entry.token);
    this.entries.delete(id);
  }

  /** The spawner is gone: its commands' exits can no longer be known. */
  private shutdown(): void {
    if (this.gone) return;
    this.gone = true;
    this.server.close();
    for (const [id, entry] of this.entries) {
      this.forget(id);
      if (entry.settle) entry.settle({ error: "ESRCH" });
      else if (!entry.exited) entry.handlers.onExit(null, null);
    }
  }
}

let shared: Spawner | undefined | null;

/**
 * The agent's spawner, started on first use and again if it went away; null
 * when this agent has none (a build without a C compiler): commands then
 * fork the agent through child_process.
 */
export function agentSpawner(): Spawner | null {
  if (shared === null) return null;
  if (!shared?.alive) shared = Spawner.start() ?? null;
  return shared;
}

export type { Spawner };
