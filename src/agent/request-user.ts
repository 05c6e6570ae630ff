/**
 * Which sandbox user a request acts as: the `Authorization: Basic
 * base64("<user>:")` header (RPC) or the `username` query (HTTP), else the
 * default user from `/init`.
 *
 * @module
 */
import type { AgentState } from "./state";
import { lookupUser, type SandboxUser } from "./users";

/** The requested user does not exist in the sandbox. */
export class UnknownUserError extends Error {
  constructor(readonly username: string) {
    super(`invalid username: '${username}'`);
    this.name = "UnknownUserError";
  }
}

/** The user name carried by a Basic authorization header, or undefined. */
export function usernameFromAuthorization(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Basic\s+(.+)$/i.exec(header.trim());
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 ? decoded.slice(0, colon) : decoded;
}

/** Resolves `name` (or the default user when empty) to a sandbox user. */
export function resolveUser(state: AgentState, name: string | undefined): SandboxUser {
  const wanted = name || state.settings.defaultUser;
  const user = lookupUser(wanted);
  if (!user) throw new UnknownUserError(wanted);
  return user;
}
