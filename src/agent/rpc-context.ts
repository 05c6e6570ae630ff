/**
 * Helpers shared by the Connect handlers: the acting user and error mapping.
 *
 * @module
 */
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { SandboxIacError } from "../errors";
import { ENVD_HEADERS } from "../wire/envd";
import { errnoReport } from "../wire/errno";
import { PathError, resolvePath } from "./paths";
import { UnknownUserError, resolveUser, usernameFromAuthorization } from "./request-user";
import type { AgentState } from "./state";
import type { SandboxUser } from "./users";

/** The user the RPC acts as; `unauthenticated` when unknown. */
export function rpcUser(state: AgentState, ctx: HandlerContext): SandboxUser {
  try {
    return resolveUser(
      state,
      usernameFromAuthorization(ctx.requestHeader.get(ENVD_HEADERS.authorization)),
    );
  } catch (err) {
    if (err instanceof UnknownUserError) throw new ConnectError(err.message, Code.Unauthenticated);
    throw err;
  }
}

/** Resolves a request path for `user`; `invalid_argument` when it cannot be. */
export function rpcPath(state: AgentState, user: SandboxUser, p: string): string {
  try {
    return resolvePath(p, user, state.settings.defaultWorkdir);
  } catch (err) {
    if (err instanceof PathError) throw new ConnectError(err.message, Code.InvalidArgument);
    throw err;
  }
}

/** Turns an unexpected filesystem error into a Connect error with envd's codes. */
export function fsError(err: unknown, what: string): ConnectError {
  if (err instanceof ConnectError) return err;
  const report = errnoReport(err);
  if (report) return new ConnectError(`${what}: ${report.reason}`, report.code);
  return new ConnectError(
    `${what}: ${SandboxIacError.from(err, { operation: what }).reason}`,
    Code.Internal,
  );
}
