/**
 * The agent's side of `sudo`: a Unix socket only `user` (and root) can
 * connect to, on which each connection runs one command as root (or the user
 * `-u` names) and relays stdin, stdout, stderr, signals and the exit code.
 * Bubblewrap sets no-new-privileges, so a setuid sudo cannot work; the agent
 * already runs as root inside the sandbox's user namespace, where root is an
 * unprivileged host uid range, which is what makes this faithful to E2B's
 * passwordless sudo without widening the sandbox's boundary.
 *
 * The socket's directory is root-owned (so `user` cannot swap the socket) and
 * the socket is `user`'s with mode 0600 (so no other uid can connect). Node
 * cannot read peer credentials, so those permissions are the check.
 *
 * @module
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { SHELL_WRAPPER } from "../constants";
import { processCwd, processEnv } from "../process/spawn";
import type { AgentState } from "../state";
import { lookupUser, type SandboxUser } from "../users";
import { signalNumber } from "../process/end-event";
import {
  encodeFrame,
  FORWARDED_SIGNALS,
  FRAME,
  FrameDecoder,
  MAX_DATA_BYTES,
  MAX_REQUEST_BYTES,
  sudoRequestSchema,
  type SudoRequest,
} from "./protocol";
import { SandboxIacError } from "../../errors";

/** Connections served at once; more wait in the kernel's backlog. */
const MAX_CONNECTIONS = 64;
/** How long a new connection may take to send its request. */
const REQUEST_TIMEOUT_MS = 10_000;
/** The frames a client may send, with their largest payloads. */
const CLIENT_FRAME_BYTES: Record<number, number | undefined> = {
  [FRAME.request]: MAX_REQUEST_BYTES,
  [FRAME.stdin]: MAX_DATA_BYTES,
  [FRAME.stdinEnd]: 0,
  [FRAME.signal]: 16,
};
/** Variables of the caller that survive without `-E` (sudo's env_reset keeps these). */
const KEPT_VARIABLES =
  /^(TERM|COLORTERM|DISPLAY|XAUTHORITY|LANG|LANGUAGE|LC_[A-Z_]+|TZ|COLUMNS|LINES)$/;

/** Where and for whom the sudo socket listens. */
export interface SudoServerOptions {
  /** The socket path; its directory is recreated. */
  socket: string;
  /** The user allowed to connect (owner of the socket). */
  owner: SandboxUser;
  state: AgentState;
}

/** Starts the sudo socket; resolves once it listens with its final permissions. */
export async function startSudoServer(opts: SudoServerOptions): Promise<net.Server> {
  const dir = path.dirname(opts.socket);
  // The directory is on the sandbox's disk, which untrusted code could have
  // changed before a snapshot: never reuse it, whatever it has become.
  fs.rmSync(dir, { recursive: true, force: true });
  // A template may have removed `/run/sandbox-iac`; root creates it again.
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.chownSync(dir, 0, 0);
  const server = net.createServer((sock) => serveConnection(sock, opts));
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.socket, () => resolve());
  });
  // Only after the socket is `user`'s with 0600 can anyone reach it.
  fs.chmodSync(opts.socket, 0o600);
  fs.chownSync(opts.socket, opts.owner.uid, opts.owner.gid);
  fs.chmodSync(dir, 0o755);
  return server;
}

/** The command line `req` runs, before the agent's exec wrapper. */
function commandOf(req: SudoRequest, target: SandboxUser): string[] {
  const command = req.argv.join(" ");
  if (req.login)
    return req.argv.length ? [target.shell, "-l", "-c", command] : [target.shell, "-l"];
  if (req.shell) return req.argv.length ? [target.shell, "-c", command] : [target.shell];
  return req.argv;
}

/** The environment of `req`'s command, as sudo would build it. */
function envOf(
  req: SudoRequest,
  target: SandboxUser,
  caller: SandboxUser,
  state: AgentState,
): Record<string, string> {
  const kept =
    req.preserveEnv && !req.login
      ? req.env
      : Object.fromEntries(Object.entries(req.env).filter(([k]) => KEPT_VARIABLES.test(k)));
  return {
    ...processEnv(state, target, kept),
    ...(req.login ? { HOME: target.home, SHELL: target.shell } : {}),
    SUDO_USER: caller.name,
    SUDO_UID: String(caller.uid),
    SUDO_GID: String(caller.gid),
    SUDO_COMMAND: req.argv.join(" ").slice(0, 4096),
  };
}

function serveConnection(sock: net.Socket, opts: SudoServerOptions): void {
  let started = false;
  let child: ReturnType<typeof spawn> | undefined;
  let exited = false;
  const decoder = new FrameDecoder((type) => CLIENT_FRAME_BYTES[type]);
  const fail = (message: string) => {
    sock.end(
      Buffer.concat([
        encodeFrame(FRAME.stderr, `sudo: ${message}\n`),
        encodeFrame(FRAME.exit, JSON.stringify({ code: 1, signal: null })),
      ]),
    );
  };
  sock.setTimeout(REQUEST_TIMEOUT_MS, () => {
    if (!started) sock.destroy();
  });
  sock.on("error", () => undefined);
  sock.on("close", () => {
    if (child && !exited) child.kill("SIGHUP");
  });
  sock.on("data", (chunk: Buffer) => {
    let frames: Array<{ type: number; payload: Buffer }>;
    try {
      frames = decoder.push(chunk);
    } catch {
      sock.destroy();
      return;
    }
    for (const f of frames) {
      // Exactly one request, first.
      if ((f.type === FRAME.request) === started) {
        sock.destroy();
        return;
      }
      if (f.type === FRAME.request) {
        started = true;
        sock.setTimeout(0);
        child = startCommand(f.payload, sock, opts, fail, () => (exited = true));
      } else if (!child || exited) {
        continue;
      } else if (f.type === FRAME.stdin) {
        if (child.stdin && !child.stdin.destroyed && !child.stdin.write(f.payload)) {
          sock.pause();
          child.stdin.once("drain", () => sock.resume());
        }
      } else if (f.type === FRAME.stdinEnd) {
        child.stdin?.end();
      } else if (f.type === FRAME.signal) {
        const sig = f.payload.toString();
        if ((FORWARDED_SIGNALS as readonly string[]).includes(sig))
          child.kill(sig as NodeJS.Signals);
      }
    }
  });
}

function startCommand(
  payload: Buffer,
  sock: net.Socket,
  opts: SudoServerOptions,
  fail: (message: string) => void,
  onExit: () => void,
): ReturnType<typeof spawn> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(payload.toString("utf8"));
  } catch {
    fail("malformed request");
    return undefined;
  }
  const parsed = sudoRequestSchema.safeParse(raw);
  if (!parsed.success) {
    fail(`malformed request: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    return undefined;
  }
  const req = parsed.data;
  const target = lookupUser(req.user);
  if (!target) {
    fail(`unknown user ${req.user}`);
    return undefined;
  }
  const argv = commandOf(req, target);
  if (argv.length === 0) {
    fail("no command given");
    return undefined;
  }
  let cwd: string;
  try {
    cwd = req.login ? target.home : processCwd(opts.state, target, req.cwd);
  } catch (err) {
    fail(SandboxIacError.from(err, { operation: "sudo" }).reason);
    return undefined;
  }
  const child = spawn(SHELL_WRAPPER[0], [...SHELL_WRAPPER.slice(1), ...argv], {
    cwd,
    env: envOf(req, target, opts.owner, opts.state),
    uid: target.uid,
    gid: target.gid,
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.on("error", () => undefined);
  for (const [stream, type] of [
    [child.stdout, FRAME.stdout],
    [child.stderr, FRAME.stderr],
  ] as const) {
    stream.on("data", (d: Buffer) => {
      if (sock.destroyed) return;
      if (!sock.write(encodeFrame(type, d))) {
        stream.pause();
        sock.once("drain", () => stream.resume());
      }
    });
  }
  child.on("error", (err) => {
    onExit();
    if (!sock.writableEnded) fail(`${argv[0]}: ${err.message}`);
  });
  // "close": exited and both pipes drained, so the exit frame comes last.
  child.on("close", (code, signal) => {
    onExit();
    const exit = { code: code ?? 0, signal: signal ? signalNumber(signal) : null };
    if (!sock.writableEnded) sock.end(encodeFrame(FRAME.exit, JSON.stringify(exit)));
  });
  return child;
}
