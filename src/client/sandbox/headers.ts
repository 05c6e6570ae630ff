/**
 * Request headers of the in-sandbox interface: routing, access token, user,
 * keepalive. Names come from `src/wire/envd.ts`; reference
 * docs/control-api.md#hosts-and-urls and docs/envd.md#authentication-users-and-headers.
 *
 * @module
 */
import { ENVD_HEADERS, ENVD_PORT } from "../../wire/envd";
import { CLIENT_KEEPALIVE_SECONDS } from "./constants";

/** Plain header record; keys keep the casing of `src/wire/envd.ts`. */
export type HeaderRecord = Record<string, string>;

/** Inputs of {@link baseHeaders}. */
export interface BaseHeaderInput {
  /** The sandbox to route to. */
  sandboxID: string;
  /** The sandbox's `envdAccessToken`. @default none: no `X-Access-Token` is sent */
  accessToken?: string | undefined;
  /**
   * Extra headers, typically the routing headers from the configuration. They
   * win over the defaults computed here.
   * @default none
   */
  headers?: HeaderRecord | undefined;
}

/**
 * Headers sent on every request to the sandbox: `E2b-Sandbox-Id` and
 * `E2b-Sandbox-Port` (always, like the official SDK: a proxy that routes by
 * host ignores them, one that serves every sandbox on one URL needs them), and
 * `X-Access-Token` when a token is known.
 */
export function baseHeaders(input: BaseHeaderInput): HeaderRecord {
  const out: HeaderRecord = {
    [ENVD_HEADERS.sandboxID]: input.sandboxID,
    [ENVD_HEADERS.sandboxPort]: String(ENVD_PORT),
  };
  if (input.accessToken) out[ENVD_HEADERS.accessToken] = input.accessToken;
  return mergeHeaders(out, input.headers);
}

/** `Basic base64("<user>:")`: how envd learns the user; the password is always empty. */
export function basicUserAuth(user: string): string {
  return `Basic ${Buffer.from(`${user}:`, "utf8").toString("base64")}`;
}

/** The `Authorization` header for `user`, or nothing so envd's default user applies. */
export function userHeaders(user: string | undefined): HeaderRecord {
  return user ? { [ENVD_HEADERS.authorization]: basicUserAuth(user) } : {};
}

/** Asks the server for keepalives on an idle stream, so proxies keep it open. */
export function keepaliveHeaders(): HeaderRecord {
  return { [ENVD_HEADERS.keepalivePingInterval]: String(CLIENT_KEEPALIVE_SECONDS) };
}

/**
 * Merges header records left to right; a later record wins, compared without
 * case (HTTP names are case-insensitive, and `Headers` would otherwise join
 * two spellings of one name into a comma list).
 */
export function mergeHeaders(...records: Array<HeaderRecord | undefined>): HeaderRecord {
  const out: HeaderRecord = {};
  const keyByLower = new Map<string, string>();
  for (const record of records) {
    for (const [name, value] of Object.entries(record ?? {})) {
      const previous = keyByLower.get(name.toLowerCase());
      if (previous !== undefined) delete out[previous];
      keyByLower.set(name.toLowerCase(), name);
      out[name] = value;
    }
  }
  return out;
}
