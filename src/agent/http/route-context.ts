/**
 * What every plain-HTTP handler receives, and resolution of the acting user
 * and path from the `username` / `path` query.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { FILES_QUERY } from "../../wire/envd";
import { PathError, resolvePath } from "../paths";
import { UnknownUserError, resolveUser } from "../request-user";
import type { AgentState } from "../state";
import type { SandboxUser } from "../users";
import { HttpError } from "./respond";

/** One plain-HTTP request. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  state: AgentState;
}

/** The user named by `name` (default user when empty); 401 when unknown. */
export function httpUser(ctx: RouteContext, name?: string | null): SandboxUser {
  try {
    return resolveUser(
      ctx.state,
      name ?? ctx.url.searchParams.get(FILES_QUERY.username) ?? undefined,
    );
  } catch (err) {
    if (err instanceof UnknownUserError)
      throw new HttpError(401, `invalid user: '${err.username}'`);
    throw err;
  }
}

/** Resolves `p` for `user`; 400 when it cannot be. */
export function httpPath(ctx: RouteContext, user: SandboxUser, p: string): string {
  try {
    return resolvePath(p, user, ctx.state.settings.defaultWorkdir);
  } catch (err) {
    if (err instanceof PathError) throw new HttpError(400, err.message);
    throw err;
  }
}
