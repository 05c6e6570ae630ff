/**
 * Entry point of the in-sandbox agent (our envd): serves HTTP/1.1 on a Unix
 * socket. Started by the runtime as
 * `node agent.js --socket /run/sandbox-iac/agent.sock`, as root, cwd `/`.
 *
 * @module
 */
import * as fs from "node:fs";
import * as http from "node:http";
import { redact, SandboxIacError } from "../errors";
import { AGENT_SOCKET_IN_SANDBOX } from "../local/agent-launch";
import { createAgentHandler } from "./server";
import { createAgentState } from "./state";

/** Idle keep-alive timeout of envd's server. */
const IDLE_TIMEOUT_MS = 640_000;

/** Parses `--socket <path>`. @default the socket path of agent-launch.ts */
export function parseArgs(argv: string[]): { socket: string } {
  let socket = AGENT_SOCKET_IN_SANDBOX;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
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
        `unknown argument ${JSON.stringify(a)}: only --socket <path> is accepted`,
        {
          operation: "agent.start",
          field: a,
        },
      );
    }
  }
  return { socket };
}

/** Starts the agent on `socket`; resolves once it listens. */
export async function startAgent(socket: string): Promise<http.Server> {
  const server = http.createServer(createAgentHandler({ state: createAgentState() }));
  // Streams (commands, watches) stay open for as long as they run.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;
  fs.rmSync(socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  // The host side connects as another user through the bound run dir.
  fs.chmodSync(socket, 0o666);
  return server;
}

function main(): void {
  const { socket } = parseArgs(process.argv.slice(2));
  process.on("uncaughtException", (err) =>
    console.error(redact(`agent: uncaught: ${err.stack ?? err.message}`)),
  );
  process.on("unhandledRejection", (err) =>
    console.error(redact(`agent: unhandled rejection: ${String(err)}`)),
  );
  startAgent(socket).then(
    (server) => {
      const stop = () => server.close(() => process.exit(0));
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
    },
    (err: unknown) => {
      console.error(redact(`agent: cannot listen on ${socket}: ${(err as Error).message}`));
      process.exit(1);
    },
  );
}

if (require.main === module) main();
