/**
 * Entry point of the in-sandbox agent (our envd): serves HTTP/1.1 on a Unix
 * socket. Started by the runtime as `node agent.js --listen-fd 3`, as root,
 * cwd `/`: the service created the listening socket in a host directory the
 * sandbox cannot see and passed it down, so the only way in is the service's.
 * (`--socket <path>` listens on a path instead; the agent's own tests use it.)
 * Started in a sandbox, it also serves `sudo` for `user` (./sudo/server.ts);
 * `node agent.js --sudo [sudo options] command...` is that command's client.
 *
 * @module
 */
import * as fs from "node:fs";
import * as http from "node:http";
import { redact, SandboxIacError } from "../errors";
import { AGENT_SOCKET_IN_SANDBOX, SUDO_SOCKET_IN_SANDBOX } from "../wire/sandbox-paths";
import { DEFAULT_USER } from "../wire/envd";
import { createBootHandler } from "./boot-handler";
import { createAgentState, type AgentState } from "./state";
import { lookupUser } from "./users";

/** Idle keep-alive timeout of envd's server. */
const IDLE_TIMEOUT_MS = 640_000;

/** Where the agent listens: an inherited listening descriptor, or a socket path. */
export type ListenTarget = { fd: number } | { socket: string };

/** Parses `--listen-fd <n>` or `--socket <path>`. @default the socket path of agent-launch.ts */
export function parseArgs(argv: string[]): ListenTarget {
  let socket = AGENT_SOCKET_IN_SANDBOX;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--listen-fd") {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 3) {
        throw new SandboxIacError(
          "invalid_argument",
          `--listen-fd needs a descriptor number >= 3, got ${JSON.stringify(argv[i])}: pass --listen-fd <n>`,
          { operation: "agent.start", field: "--listen-fd" },
        );
      }
      return { fd: v };
    }
    if (a === "--socket") {
      const v = argv[++i];
      if (!v) {
        throw new SandboxIacError(
          "invalid_argument",
          "--socket needs a path: pass --socket <path>",
          {
            operation: "agent.start",
            field: "--socket",
          },
        );
      }
      socket = v;
    } else if (a.startsWith("--socket=")) socket = a.slice("--socket=".length);
    else {
      throw new SandboxIacError(
        "invalid_argument",
        `unknown argument ${JSON.stringify(a)}: only --listen-fd <n> or --socket <path> is accepted`,
        {
          operation: "agent.start",
          field: a,
        },
      );
    }
  }
  return { socket };
}

/** Options of {@link startAgent}. */
export interface StartAgentOptions {
  /**
   * Also serve `sudo` for `user` on this socket path (the agent must be root),
   * from when the agent's full handler loads (boot-handler.ts): only commands,
   * which that handler serves, can call it.
   * @default undefined (no sudo socket; the agent's own tests run without one)
   */
  sudoSocket?: string;
  /**
   * Run once the full handler has loaded, before it serves its first request.
   * @default nothing
   */
  afterFullLoad?: () => Promise<void>;
}

/** Starts the agent on `target` (a socket path or a descriptor); resolves once it listens. */
export async function startAgent(
  target: string | ListenTarget,
  options: StartAgentOptions = {},
): Promise<http.Server> {
  const where = typeof target === "string" ? { socket: target } : target;
  const state = createAgentState();
  const { sudoSocket, afterFullLoad } = options;
  const server = http.createServer(
    createBootHandler({
      state,
      ...(sudoSocket || afterFullLoad
        ? {
            withFull: async () => {
              if (sudoSocket) await startSudo(sudoSocket, state);
              await afterFullLoad?.().catch((err: unknown) =>
                console.error(redact(`agent: after the full load: ${String(err)}`)),
              );
            },
          }
        : {}),
    }),
  );
  // Streams (commands, watches) stay open for as long as they run.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;
  if ("fd" in where) {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ fd: where.fd }, () => resolve());
    });
    return server;
  }
  const socket = where.socket;
  fs.rmSync(socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  // The host side connects as another user through the bound run dir.
  fs.chmodSync(socket, 0o666);
  return server;
}

/**
 * Starts the sudo socket for `user`. A sandbox without that user, or a failure
 * here, leaves `sudo` saying it cannot reach the agent: never the agent down.
 */
async function startSudo(socket: string, state: AgentState): Promise<void> {
  const owner = lookupUser(DEFAULT_USER);
  if (!owner || owner.uid === 0) return;
  try {
    const { startSudoServer } = await import("./sudo/server");
    const server = await startSudoServer({ socket, owner, state });
    server.unref();
  } catch (err) {
    console.error(
      redact(
        `agent: sudo socket at ${socket} not started: ${SandboxIacError.from(err, { operation: "agent.start" }).reason}`,
      ),
    );
  }
}

/**
 * Keeps V8's young generation at its start size (1 MiB per semi-space; Node
 * lets it grow to 16 MiB): an agent that has served many requests then stays
 * near its start size, measured 78 MiB RSS instead of 97 MiB after 200
 * commands, memory every idle sandbox holds. Set now rather than as
 * `--max-semi-space-size=1` on the command line: any V8 flag there changes
 * V8's flag hash, and V8 then refuses the code cache Node ships for its own
 * modules (`node:http`, `node:net`, `node:http2`...), which then compile from
 * source: measured +14 ms CPU before `/health` and +30 ms before the first
 * RPC. After the full handler's load, the modules a later start needs are in.
 */
async function capYoungGeneration(): Promise<void> {
  // Loaded here: node:v8 costs about as much CPU as node:http, which a start needs and this does not.
  const v8 = await import("node:v8");
  v8.setFlagsFromString("--semi-space-growth-factor=1");
}

function sudoMain(args: string[]): void {
  // Loaded here: the server side never needs it.
  import("./sudo/client")
    .then(({ runSudoClient }) => runSudoClient(args))
    .then(
      (code) => process.stdout.write("", () => process.stderr.write("", () => process.exit(code))),
      (err: unknown) => {
        process.stderr.write(
          `sudo: ${SandboxIacError.from(err, { operation: "agent.start" }).reason}\n`,
        );
        process.exit(1);
      },
    );
}

/** Runs the agent process: the sudo client with `--sudo`, the server otherwise. */
export function main(): void {
  if (process.argv[2] === "--sudo") {
    sudoMain(process.argv.slice(3));
    return;
  }
  const target = parseArgs(process.argv.slice(2));
  const socket = "fd" in target ? `descriptor ${target.fd}` : target.socket;
  process.on("uncaughtException", (err) =>
    console.error(redact(`agent: uncaught: ${err.stack ?? err.message}`)),
  );
  process.on("unhandledRejection", (err) =>
    console.error(redact(`agent: unhandled rejection: ${String(err)}`)),
  );
  startAgent(target, {
    sudoSocket: SUDO_SOCKET_IN_SANDBOX,
    afterFullLoad: capYoungGeneration,
  }).then(
    (server) => {
      const stop = () => server.close(() => process.exit(0));
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
    },
    (err: unknown) => {
      console.error(
        redact(
          `agent: cannot listen on ${socket}: ${SandboxIacError.from(err, { operation: "agent.start" }).reason}`,
        ),
      );
      process.exit(1);
    },
  );
}

if (require.main === module) main();
