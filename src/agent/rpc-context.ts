/**
 * Helpers shared by the Connect handlers: the acting user and error mapping.
 *
 * @module
 */
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { ENVD_HEADERS } from "../wire/envd";
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
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case "ENOENT":
      return new ConnectError(`${what}: no such file or directory`, Code.NotFound);
    case "EACCES":
    case "EPERM":
      return new ConnectError(`${what}: permission denied`, Code.PermissionDenied);
    case "EEXIST":
      return new ConnectError(`${what}: already exists`, Code.AlreadyExists);
    case "ENOTDIR":
      return new ConnectError(`${what}: not a directory`, Code.InvalidArgument);
    case "ENOSPC":
      return new ConnectError(`${what}: no space left on device`, Code.ResourceExhausted);
    case "ELOOP":
      return new ConnectError(
        `${what}: too many levels of symbolic links`,
        Code.FailedPrecondition,
      );
    default:
      return new ConnectError(`${what}: ${e?.message ?? String(err)}`, Code.Internal);
  }
}
