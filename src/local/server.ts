/**
 * The one request handler of the service port: sandbox requests (routing
 * headers, sandbox Host under the service's domain, unrouted `/files` links,
 * CORS preflights) go to the proxy, a sandbox Host under another domain gets
 * a 421, everything else goes to the control-API router. A body left unread
 * by an early answer is drained (src/wire/early-answer.ts).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { drainWhenAnswered } from "../wire/early-answer";
import { ENVD_PORT } from "../wire/envd";
import { answerPreflight, isPreflight } from "./control/cors";
import type { Route } from "./control/http";
import {
  sendSandboxJson,
  sendSandboxNotFound,
  servePortRequest,
  serveSandboxRequest,
} from "./proxy/forward";
import { createRouter } from "./control/router";
import {
  foreignHostMessage,
  isUnroutedFilesRequest,
  resolveFilesTarget,
  sandboxAddress,
} from "./proxy/routing";
import { accessTokenRoutes } from "./control/access-tokens";
import type { SandboxManager } from "./control/sandboxes/manager";

/** What the handler serves. */
export interface ServiceHandlerOptions {
  manager: SandboxManager;
  /** Every control route (sandboxes, templates, health). */
  routes: Route[];
  apiKey: string;
  log: (line: string) => void;
  /**
   * The domain sandbox Hosts must be under (`<port>-<sandboxID>.<domain>`),
   * read per request: it is known once the service listens.
   */
  domain: () => string;
}

/** Builds the `node:http` request listener. */
export function createServiceHandler(
  opts: ServiceHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const control = createRouter(
    [...opts.routes, ...accessTokenRoutes(opts.apiKey)],
    opts.apiKey,
    opts.log,
  );
  const manager = opts.manager;
  return (req, res) => {
    // Whichever route answers before the body's end (a relay cut short by a
    // killed sandbox, a refusal), the client's next request on this
    // connection must still be read.
    drainWhenAnswered(req, res);
    const done = (err: unknown): void => {
      opts.log(
        `request ${req.method ?? "?"} ${(req.url ?? "").split("?")[0]} failed: ${String(err)}`,
      );
      if (!res.headersSent)
        sendSandboxJson(res, 500, { code: 500, message: "internal error; see the service log" });
      else res.destroy();
    };
    try {
      if (isPreflight(req)) return answerPreflight(req, res);
      const address = sandboxAddress(req, opts.domain());
      if (address && "foreignHost" in address) {
        // 421 Misdirected Request: this server does not answer for that name.
        const message = foreignHostMessage(address, opts.domain());
        return sendSandboxJson(res, 421, { code: 421, message });
      }
      if (address) {
        const target = manager.reachable(address.sandboxID);
        if (!target) return sendSandboxNotFound(res, address.sandboxID);
        if (address.port !== ENVD_PORT)
          return servePortRequest(
            target,
            address.port,
            manager.trafficTokenOf(target.record),
            req,
            res,
          );
        serveSandboxRequest(manager, target, req, res).catch(done);
        return;
      }
      if (isUnroutedFilesRequest(req)) {
        const found = resolveFilesTarget(manager, req);
        if (found.kind === "error")
          return sendSandboxJson(res, found.status, { code: found.status, message: found.message });
        serveSandboxRequest(manager, found.target, req, res).catch(done);
        return;
      }
      control(req, res).catch(done);
    } catch (err) {
      done(err);
    }
  };
}
