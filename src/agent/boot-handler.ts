/**
 * The request listener an agent serves with from its first moment. It answers
 * what the service needs before a sandbox counts as ready, `GET /health` and
 * `POST /init`, itself, and loads the full handler (server.ts: Connect,
 * protobuf-es and its descriptors, `node:http2`, the process and filesystem
 * services) only after that: once the agent has been quiet for a moment after
 * a boot request, or at once for the first request only the full handler
 * serves. Evaluating those modules cost about as much CPU as Node's own start,
 * and every sandbox's cold start waited for it before answering `/health`;
 * a warm-pool member now loads them while it waits for its claim.
 *
 * Once loaded, the full handler serves every request (its routes include
 * `/health` and `/init`), so what a request gets does not depend on when it
 * came.
 *
 * @module
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { redact, SandboxIacError } from "../errors";
import { ENVD_ROUTES } from "../wire/envd";
import { init } from "./http/init";
import { health } from "./http/metrics";
import { sendError } from "./http/respond";
import { runRoute, type Route } from "./http/run-route";
import type { AgentHandlerOptions } from "./server";

/** The routes served before the full handler is loaded; neither needs the token (server.ts). */
const BOOT_ROUTES: Record<string, Route> = {
  [`GET ${ENVD_ROUTES.health}`]: health,
  [`POST ${ENVD_ROUTES.init}`]: init,
};

/**
 * Quiet time after a boot request other than `/init` before the full handler
 * loads: the service sends `/init` right after a cold start's first `/health`,
 * and that `/init` should not wait behind the load. After `/init` the load
 * starts at once (a command usually follows).
 */
const IDLE_BEFORE_LOAD_MS = 50;

/** Options of {@link createBootHandler}. */
interface BootHandlerOptions extends AgentHandlerOptions {
  /**
   * Started when the full handler loads, and awaited before it serves its
   * first request (the sudo socket, which only commands use). Must not reject.
   * @default nothing
   */
  withFull?: () => Promise<void>;
}

/** Builds the agent's request listener: boot routes at once, the full handler loaded later. */
export function createBootHandler(options: BootHandlerOptions): RequestListener {
  const log = options.log ?? ((m: string) => console.error(m));
  let loading: Promise<RequestListener> | undefined;
  let loaded: RequestListener | undefined;
  let idle: NodeJS.Timeout | undefined;

  const loadFull = (): Promise<RequestListener> => {
    if (!loading) {
      clearTimeout(idle);
      loading = (async () => {
        const { createAgentHandler } = await import("./server");
        const handler = createAgentHandler(options);
        await options.withFull?.();
        return (loaded = handler);
      })();
    }
    return loading;
  };

  const afterBootAnswer = (key: string) => {
    if (loading) return;
    const delay = key === `POST ${ENVD_ROUTES.init}` ? 0 : IDLE_BEFORE_LOAD_MS;
    clearTimeout(idle);
    // A failed load is answered to the request that needs the full handler.
    idle = setTimeout(() => void loadFull().catch(() => undefined), delay);
  };

  return (req: IncomingMessage, res: ServerResponse) => {
    if (loaded) {
      loaded(req, res);
      return;
    }
    const url = new URL(req.url ?? "/", "http://agent");
    const key = `${req.method ?? "GET"} ${url.pathname}`;
    const route = BOOT_ROUTES[key];
    if (!route) {
      loadFull().then(
        (handler) => handler(req, res),
        (err: unknown) => {
          const reason = SandboxIacError.from(err, { operation: "agent.start" }).reason;
          log(redact(`agent: ${key} failed: the agent's handler did not load: ${reason}`));
          sendError(res, 500, `${key} failed: the agent's handler did not load: ${reason}`);
        },
      );
      return;
    }
    res.once("finish", () => afterBootAnswer(key));
    runRoute(route, { req, res, url, state: options.state }, key, log);
  };
}
