/**
 * How a plain-HTTP route runs: its failure becomes envd's error answer, an
 * {@link HttpError} as it is, anything else a 500 whose stack goes to the
 * agent's log. Shared by the agent's boot handler (boot-handler.ts) and its
 * full one (server.ts).
 *
 * @module
 */
import { redact, SandboxIacError } from "../../errors";
import { HttpError, sendError } from "./respond";
import type { RouteContext } from "./route-context";

/** A plain-HTTP route. */
export type Route = (ctx: RouteContext) => Promise<void>;

/** Runs `route` for the request `key` (`METHOD /path`), answering its failure. */
export function runRoute(
  route: Route,
  ctx: RouteContext,
  key: string,
  log: (message: string) => void,
): void {
  route(ctx).catch((err: unknown) => {
    if (err instanceof HttpError) {
      sendError(ctx.res, err.status, err.message);
      return;
    }
    const failure = SandboxIacError.from(err, { operation: key });
    const stack = err instanceof Error ? err.stack : undefined;
    log(redact(`agent: ${key} failed: ${stack ?? failure.reason}`));
    sendError(ctx.res, 500, `${key} failed: ${failure.reason}`);
  });
}
