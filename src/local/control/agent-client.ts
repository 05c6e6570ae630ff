/**
 * The service's own calls into a sandbox's agent: the project's sandbox
 * client (`createSandboxClient`) reaching the agent's Unix socket
 * (`RuntimeSandbox.agentSocket`) through an injected Connect transport and
 * fetch, plus the two routes that are not part of the client: `/init` and the
 * internal archive extraction, sent with node:http (`agent-post.ts`: `/init`
 * is on every create's path, where undici's fetch cost several times the CPU).
 * The client's Connect calls and those two go over the sandbox's connection
 * pool, the one the relay uses too (`agent-pool.ts`); the client's file
 * routes go through undici's fetch.
 *
 * Running a command is the client's: `start(cmd)` then `wait()` for the exit
 * code and output (a non-zero exit is a value, and `onStdout`/`onStderr`
 * stream it), or `start(cmd)` then `disconnect()` to leave it running in the
 * background (envd keeps a process whose client went away).
 *
 * One error mapping, the client's (`src/client/sandbox/errors.ts`, tables in
 * `src/wire/envd-status.ts`), for every call including `/init` and the
 * extraction, so each failure has one code wherever the service meets it:
 * - the agent cannot be reached (socket refused or gone): `unavailable`;
 * - the agent refuses a call: the code of its Connect code or HTTP status
 *   (401 `unauthenticated`, 400 `invalid_argument`, 404 `not_found`, 5xx
 *   `internal`, ...);
 * - a command outlives its `timeoutMs` (the agent kills it): `timeout`;
 * - a bad argument (an empty command, a user with `:`): `invalid_argument`,
 *   before anything is sent;
 * - a command that exits non-zero: no error, `wait()` returns its exit code.
 *
 * The service answers a request with the code's status (`src/wire/control-status.ts`)
 * unless the caller turns the failure into one of its own (a failed ready
 * command, a failed build step).
 *
 * @module
 */
import type { Readable } from "node:stream";
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Agent, fetch as undiciFetch } from "undici";
import { createSandboxClient, type SandboxClient, type StartOptions } from "../../client/sandbox";
import { SandboxIacError } from "../../errors";
import { baseHeaders } from "../../client/sandbox/headers";
import { AGENT_INTERNAL_ROUTES, CONTENT_TYPES, ENVD_ROUTES, FILES_QUERY } from "../../wire/envd";
import type { RuntimeSandbox } from "../runtime/types";
import { postToAgent } from "./agent-post";
import { agentPool, type AgentEndpoint } from "./agent-pool";

/**
 * The origin requests to an agent name. The socket decides where they go; the
 * host only fills the `Host` header, which the agent ignores.
 */
const AGENT_ORIGIN = "http://localhost";

/** What `/init` configures in the agent, besides the access token. */
export interface AgentInit {
  /** Environment variables every process of the sandbox gets. */
  envVars: Record<string, string>;
  /**
   * The user processes run as when a request names none.
   * @default undefined: the agent keeps its own default
   */
  defaultUser?: string | undefined;
  /**
   * The working directory when a request names none.
   * @default undefined: the user's home
   */
  defaultWorkdir?: string | undefined;
}

/**
 * How long the service waits for an agent to answer a call of its own that
 * should be quick (`/init`, the start of a background command) or to take
 * more of an archive it extracts. The agent runs inside the sandbox, and code
 * there (as root, through sudo) can stop or replace it: without a deadline a
 * hung agent would hold the create, resume or build that called it, and its
 * connection, forever. Generous: a busy host delays a healthy agent by
 * seconds, never by a minute.
 */
const AGENT_CALL_TIMEOUT_MS = 60_000;

/** Options of {@link agentClient}. */
export interface AgentClientOptions {
  /**
   * The deadline of the service's own calls (`init`, `startDetached`, and
   * each wait for `extract` to take more of its archive or to answer), in ms.
   * @default 60000
   */
  callTimeoutMs?: number | undefined;
  /**
   * The sandbox's access token: sent on every call, and set by `init()` as
   * the token the agent enforces from then on.
   * @default undefined: the sandbox is not secured
   */
  accessToken?: string | undefined;
}

/** The sandbox client of one agent, with the service-only routes. */
export interface AgentClient extends SandboxClient {
  /**
   * Configures the agent (`POST /init`): environment, default user and
   * workdir, and the client's access token. The token is also sent as
   * `X-Access-Token`, so re-initialising an agent that already holds it (a
   * resume) is accepted.
   */
  init(init: AgentInit): Promise<void>;
  /**
   * Streams a tar archive (optionally gzipped) into `destDir` inside the
   * sandbox, owned by `user` (the agent's default user when undefined).
   */
  extract(destDir: string, tar: Readable, user?: string): Promise<void>;
  /**
   * Starts `cmd` and leaves it running in the background (envd keeps a
   * process whose client went away): resolves once the agent reports it
   * started, within the call deadline.
   */
  startDetached(cmd: string, options?: Omit<StartOptions, "signal" | "timeoutMs">): Promise<void>;
}

/**
 * Runs `call` with an abort signal that fires after `ms` without
 * `progress()` being called, and turns that abort into a `timeout` error
 * saying which call of which sandbox's agent stopped answering, and the fix.
 */
async function withDeadline<T>(
  ms: number,
  what: { operation: string; sandboxID: string; call: string },
  call: (signal: AbortSignal, progress: () => void) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  // Progress reported after the call settled (a body's last chunks) arms nothing: a timer
  // armed then outlived the call by `ms` and held the process open.
  const progress = () => {
    if (settled) return;
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), ms);
  };
  progress();
  try {
    return await call(controller.signal, progress);
  } catch (err) {
    if (!controller.signal.aborted) throw err;
    throw new SandboxIacError(
      "timeout",
      `the agent of sandbox ${what.sandboxID} did not answer ${what.call} within ${ms / 1000} s: it is hung or was stopped or replaced by code in the sandbox; kill the sandbox and create it again`,
      { operation: what.operation, resourceId: what.sandboxID, cause: err },
    );
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

/** The Connect transport of `sandbox`'s agent, over the connections the relay uses too. */
function socketTransport(sandbox: AgentEndpoint): Transport {
  return createConnectTransport({
    baseUrl: AGENT_ORIGIN,
    httpVersion: "1.1",
    useBinaryFormat: false,
    nodeOptions: { socketPath: sandbox.agentSocket, agent: agentPool(sandbox) },
  });
}

/**
 * undici's fetch under the global fetch's types: Node's global types and
 * undici's are two declarations of the one Fetch standard API.
 */
const fetchVia = undiciFetch as unknown as (
  input: Parameters<typeof fetch>[0],
  init: Omit<RequestInit, "dispatcher"> & { dispatcher: Agent },
) => Promise<Response>;

/**
 * A fetch whose requests go to the agent listening on `socketPath`, through
 * undici's own fetch and dispatcher (Node's global fetch takes only a
 * dispatcher of the undici it bundles). The dispatcher is made on first use;
 * its idle connections do not hold the process open.
 */
function socketFetch(socketPath: string): typeof fetch {
  let dispatcher: Agent | undefined;
  return (input, init) => {
    dispatcher ??= new Agent({ connect: { socketPath } });
    return fetchVia(input, { ...init, dispatcher });
  };
}

/**
 * Configures the agent of `sandbox` (`POST /init`), as {@link AgentClient.init}
 * does, without building a sandbox client: a create that only initialises a
 * warm-pool member (most creates) then pays for `/init` alone.
 */
export async function initAgent(
  sandbox: Pick<RuntimeSandbox, "sandboxID"> & AgentEndpoint,
  init: AgentInit,
  options: AgentClientOptions & {
    /**
     * The token the agent enforces now, when an earlier `/init` (a warm-pool
     * member's, pre-init.ts) set one: the call proves it, and the body then
     * always names the token, empty to clear it.
     * @default undefined: the agent holds `accessToken` or none
     */
    heldToken?: string | undefined;
  } = {},
): Promise<void> {
  const { sandboxID, agentSocket } = sandbox;
  const { accessToken, heldToken } = options;
  const body: Record<string, unknown> = {
    envVars: init.envVars,
    timestamp: new Date().toISOString(),
  };
  if (accessToken) body.accessToken = accessToken;
  else if (heldToken) body.accessToken = "";
  if (init.defaultUser) body.defaultUser = init.defaultUser;
  if (init.defaultWorkdir) body.defaultWorkdir = init.defaultWorkdir;
  await withDeadline(
    options.callTimeoutMs ?? AGENT_CALL_TIMEOUT_MS,
    { operation: "agent.init", sandboxID, call: `POST ${ENVD_ROUTES.init}` },
    async (signal) => {
      await postToAgent({
        socketPath: agentSocket,
        agent: agentPool(sandbox),
        route: ENVD_ROUTES.init,
        headers: {
          ...baseHeaders({ sandboxID, accessToken: heldToken ?? accessToken }),
          "Content-Type": CONTENT_TYPES.json,
        },
        body: JSON.stringify(body),
        signal,
        scope: { operation: "agent.init", sandboxID },
      });
    },
  );
}

/**
 * The project's sandbox client reaching the agent of `sandbox` over its Unix
 * socket. Nothing is sent until a method is called.
 */
export function agentClient(
  sandbox: Pick<RuntimeSandbox, "sandboxID"> & AgentEndpoint,
  options: AgentClientOptions = {},
): AgentClient {
  const { sandboxID, agentSocket } = sandbox;
  const { accessToken } = options;
  const deadlineMs = options.callTimeoutMs ?? AGENT_CALL_TIMEOUT_MS;
  const fetch = socketFetch(agentSocket);
  const client = createSandboxClient({
    sandboxID,
    baseUrl: AGENT_ORIGIN,
    accessToken,
    transport: socketTransport(sandbox),
    fetch,
  });
  const headers = baseHeaders({ sandboxID, accessToken });
  return {
    ...client,

    init: (init) => initAgent(sandbox, init, options),

    async extract(destDir, tar, user) {
      // No deadline on the whole (an archive may be large), one on each wait for the agent.
      await withDeadline(
        deadlineMs,
        { operation: "agent.extract", sandboxID, call: `POST ${AGENT_INTERNAL_ROUTES.extract}` },
        async (signal, progress) => {
          await postToAgent({
            socketPath: agentSocket,
            agent: agentPool(sandbox),
            route: AGENT_INTERNAL_ROUTES.extract,
            query: { [FILES_QUERY.path]: destDir, [FILES_QUERY.username]: user },
            headers: { ...headers, "Content-Type": CONTENT_TYPES.octetStream },
            body: tar,
            signal,
            // Each chunk the agent takes is progress: a stopped agent stops taking them.
            onProgress: progress,
            scope: { operation: "agent.extract", sandboxID, resourceId: destDir },
          });
        },
      );
    },

    async startDetached(cmd, startOptions = {}) {
      const handle = await withDeadline(
        deadlineMs,
        { operation: "agent.start", sandboxID, call: `the start of ${JSON.stringify(cmd)}` },
        (signal) => client.start(cmd, { ...startOptions, signal }),
      );
      handle.disconnect();
    },
  };
}
