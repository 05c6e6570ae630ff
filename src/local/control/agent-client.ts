/**
 * Calls from the control service into a sandbox's agent over its Unix socket
 * (`RuntimeSandbox.agentSocket`): `/init`, running commands through the envd
 * `process.Process` Connect service, and the internal tar extraction route.
 *
 * @module
 */
import * as http from "node:http";
import type { Readable } from "node:stream";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Process } from "../../gen/envd/process/process_pb";
import { AGENT_INTERNAL_ROUTES, ENVD_HEADERS, ENVD_ROUTES, FILES_QUERY } from "../../wire/envd";
import { SandboxIacError } from "../../errors";

/** What `/init` configures in the agent. */
export interface AgentInit {
  /** Environment variables every process of the sandbox gets. */
  envVars: Record<string, string>;
  /**
   * The sandbox access token; once set the agent enforces it.
   * @default undefined: the sandbox is not secured
   */
  accessToken?: string;
  /**
   * The user processes run as when a request names none.
   * @default undefined: the agent keeps its own default
   */
  defaultUser?: string;
  /**
   * The working directory when a request names none.
   * @default undefined: the user's home
   */
  defaultWorkdir?: string;
}

/** The outcome of {@link agentRun}. */
export interface AgentRunResult {
  /** The exit code; -1 when the process died of a signal. */
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Options shared by the process calls. */
export interface AgentProcessOptions {
  /**
   * The user to run as.
   * @default undefined: the agent's default user
   */
  user?: string;
  /**
   * The working directory.
   * @default undefined: the agent's default workdir
   */
  cwd?: string;
  /**
   * Extra environment variables for this process.
   * @default {}
   */
  envs?: Record<string, string>;
  /**
   * The sandbox access token, when the sandbox is secured.
   * @default undefined: no token sent
   */
  accessToken?: string;
}

const OPERATION = "agent";

/** Headers common to every agent call. */
function agentHeaders(opts: {
  user?: string | undefined;
  accessToken?: string | undefined;
}): Record<string, string> {
  const headers: Record<string, string> = {};
  if (opts.accessToken) headers[ENVD_HEADERS.accessToken] = opts.accessToken;
  if (opts.user)
    headers[ENVD_HEADERS.authorization] =
      `Basic ${Buffer.from(`${opts.user}:`).toString("base64")}`;
  return headers;
}

/** A Start request running `cmd` as a login-shell line, as the SDK's `commands.run` does. */
function shellStart(cmd: string, opts: Pick<AgentProcessOptions, "envs" | "cwd">) {
  return {
    process: {
      cmd: "/bin/bash",
      args: ["-l", "-c", cmd],
      envs: opts.envs ?? {},
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    },
    stdin: false,
  };
}

function processClient(socket: string): Client<typeof Process> {
  const transport = createConnectTransport({
    baseUrl: "http://localhost",
    httpVersion: "1.1",
    useBinaryFormat: false,
    nodeOptions: { socketPath: socket },
  });
  return createClient(Process, transport);
}

/** Sends one plain HTTP request to the agent and collects the answer. */
function agentHttp(
  socket: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | Readable | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: socket, method, path, headers: { host: "localhost", ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", (err) =>
      reject(
        new SandboxIacError(
          "unavailable",
          `the sandbox agent at ${socket} cannot be reached: ${err.message}`,
          {
            operation: `${OPERATION}.${path.split("?")[0]}`,
            cause: err,
          },
        ),
      ),
    );
    if (body === undefined) req.end();
    else if (Buffer.isBuffer(body)) req.end(body);
    else {
      body.on("error", (err) => req.destroy(err));
      body.pipe(req);
    }
  });
}

/**
 * Configures the agent (`POST /init`): environment, access token, default
 * user and workdir. Sends the token in `X-Access-Token` too, so re-initialising
 * an agent that already holds the same token (a resume) is accepted.
 */
export async function agentInit(socket: string, init: AgentInit): Promise<void> {
  const body: Record<string, unknown> = {
    envVars: init.envVars,
    timestamp: new Date().toISOString(),
  };
  if (init.accessToken) body.accessToken = init.accessToken;
  if (init.defaultUser) body.defaultUser = init.defaultUser;
  if (init.defaultWorkdir) body.defaultWorkdir = init.defaultWorkdir;
  const res = await agentHttp(
    socket,
    "POST",
    ENVD_ROUTES.init,
    { "content-type": "application/json", ...agentHeaders({ accessToken: init.accessToken }) },
    Buffer.from(JSON.stringify(body)),
  );
  if (res.status !== 204 && res.status !== 200) {
    throw new SandboxIacError(
      "internal",
      `the sandbox agent refused /init with HTTP ${res.status}: ${res.text.slice(0, 200)}`,
      {
        operation: `${OPERATION}.init`,
        status: res.status,
      },
    );
  }
}

/**
 * Runs `cmd` with `/bin/bash -l -c` and waits for it to exit.
 * Resolves with the exit code and the collected output (never rejects on a
 * non-zero exit); rejects when the agent cannot be reached or the call fails.
 */
export async function agentRun(
  socket: string,
  cmd: string,
  opts: AgentProcessOptions & {
    /**
     * Kills the process after this many milliseconds.
     * @default undefined: no limit
     */
    timeoutMs?: number;
    /**
     * Called with each chunk of output as it arrives.
     * @default undefined
     */
    onOutput?: (stream: "stdout" | "stderr", text: string) => void;
  } = {},
): Promise<AgentRunResult> {
  const client = processClient(socket);
  const stream = client.start(shellStart(cmd, opts), {
    headers: agentHeaders(opts),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
  });
  const out: string[] = [];
  const err: string[] = [];
  let exitCode = -1;
  const decoder = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  try {
    for await (const msg of stream) {
      const ev = msg.event?.event;
      if (!ev) continue;
      if (ev.case === "data") {
        const data = ev.value.output;
        if (data.case === "stdout" || data.case === "stderr") {
          const text = decoder[data.case].decode(data.value, { stream: true });
          (data.case === "stdout" ? out : err).push(text);
          opts.onOutput?.(data.case, text);
        }
      } else if (ev.case === "end") {
        exitCode = ev.value.exited ? ev.value.exitCode : -1;
      }
    }
  } catch (e) {
    throw new SandboxIacError(
      "command_failed",
      `running a command in the sandbox failed: ${SandboxIacError.from(e, { operation: "agent.run" }).reason}`,
      {
        operation: `${OPERATION}.run`,
        cause: e,
      },
    );
  }
  return { exitCode, stdout: out.join(""), stderr: err.join("") };
}

/**
 * Starts `cmd` with `/bin/bash -l -c` in the background and resolves with its
 * pid once the agent reports it started. The stream is then dropped: envd
 * keeps a process running when its client disconnects.
 */
export async function agentStartBackground(
  socket: string,
  cmd: string,
  opts: AgentProcessOptions & {
    /**
     * The process tag (e.g. `start_cmd`), to find it again with `Connect`.
     * @default undefined: untagged
     */
    tag?: string;
  } = {},
): Promise<number> {
  const client = processClient(socket);
  const abort = new AbortController();
  const stream = client.start(
    { ...shellStart(cmd, opts), ...(opts.tag ? { tag: opts.tag } : {}) },
    { headers: agentHeaders(opts), signal: abort.signal },
  );
  try {
    for await (const msg of stream) {
      const ev = msg.event?.event;
      if (ev?.case === "start") return ev.value.pid;
    }
  } catch (e) {
    throw new SandboxIacError(
      "command_failed",
      `starting a background command in the sandbox failed: ${SandboxIacError.from(e, { operation: "agent.run" }).reason}`,
      {
        operation: `${OPERATION}.startBackground`,
        cause: e,
      },
    );
  } finally {
    abort.abort();
  }
  throw new SandboxIacError(
    "contract_violation",
    "the sandbox agent ended the Start stream without a start event",
    {
      operation: `${OPERATION}.startBackground`,
    },
  );
}

/**
 * Streams a tar archive (optionally gzipped) into `destDir` inside the sandbox
 * through the agent's internal extraction route.
 */
export async function agentExtract(
  socket: string,
  destDir: string,
  tar: Readable,
  opts: {
    /**
     * Owner of the extracted files.
     * @default undefined: the agent's default user
     */
    user?: string;
    /**
     * The sandbox access token, when the sandbox is secured.
     * @default undefined
     */
    accessToken?: string;
  } = {},
): Promise<void> {
  const q = new URLSearchParams({ [FILES_QUERY.path]: destDir });
  if (opts.user) q.set(FILES_QUERY.username, opts.user);
  const res = await agentHttp(
    socket,
    "POST",
    `${AGENT_INTERNAL_ROUTES.extract}?${q.toString()}`,
    {
      "content-type": "application/octet-stream",
      "transfer-encoding": "chunked",
      ...agentHeaders({ accessToken: opts.accessToken }),
    },
    tar,
  );
  if (res.status < 200 || res.status >= 300) {
    throw new SandboxIacError(
      "internal",
      `extracting files into ${destDir} in the sandbox failed with HTTP ${res.status}: ${res.text.slice(0, 200)}`,
      { operation: `${OPERATION}.extract`, status: res.status, resourceId: destDir },
    );
  }
}
