/**
 * Access tokens (`Authorization: Bearer …`), the second credential E2B's API
 * takes on template operations and `GET /teams`, which the E2B CLI uses
 * after `e2b auth login`. The local service has one user and one team, so a
 * token is an HS256 JWT (the CLI reads its `exp` to decide when to refresh)
 * signed with a key derived from the API key: whoever holds the API key can
 * mint one (`POST /access-tokens`), and changing the key revokes them all.
 *
 * @module
 */
import { createHash, createHmac } from "node:crypto";
import { serviceError, type Route } from "./http";
import { safeEqual } from "../../wire/safe-equal";

/** How long a minted token lasts, in seconds: the CLI refreshes only expired ones. */
const TOKEN_LIFETIME_SEC = 365 * 24 * 3600;

/** The one team of the local service, as `GET /teams` lists it. */
const LOCAL_TEAM = { teamID: "local", name: "local", email: "local@sandbox-iac" };

function signingKey(apiKey: string): Buffer {
  return createHash("sha256").update(`sandbox-iac access token:${apiKey}`).digest();
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

/** Mints an access token for the holder of `apiKey`. */
function mintAccessToken(apiKey: string, nowMs = Date.now()): string {
  const iat = Math.floor(nowMs / 1000);
  const head = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const body = b64url(
    JSON.stringify({
      sub: LOCAL_TEAM.email,
      email: LOCAL_TEAM.email,
      iat,
      exp: iat + TOKEN_LIFETIME_SEC,
    }),
  );
  const sig = createHmac("sha256", signingKey(apiKey))
    .update(`${head}.${body}`)
    .digest("base64url");
  return `${head}.${body}.${sig}`;
}

/** True when `token` was minted for `apiKey` and has not expired. */
export function accessTokenValid(apiKey: string, token: string, nowMs = Date.now()): boolean {
  const parts = token.split(".");
  if (parts.length !== 3) return false;
  const [head, body, sig] = parts as [string, string, string];
  const want = createHmac("sha256", signingKey(apiKey))
    .update(`${head}.${body}`)
    .digest("base64url");
  if (!safeEqual(sig, want)) return false;
  try {
    const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as { exp?: unknown };
    return typeof claims.exp === "number" && claims.exp * 1000 > nowMs;
  } catch {
    return false;
  }
}

/** The bearer token of `authorization`, if it carries one. */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  const m = value ? /^Bearer\s+(\S+)$/i.exec(value.trim()) : null;
  return m?.[1];
}

/**
 * `GET /teams` (E2B: the caller's teams, each with its API key) and
 * `POST /access-tokens` (local: mints a token for the API key's holder).
 */
export function accessTokenRoutes(apiKey: string): Route[] {
  return [
    {
      method: "GET",
      pattern: "/teams",
      auth: "apiKeyOrAccessToken",
      handler: async () => ({
        status: 200,
        body: [{ teamID: LOCAL_TEAM.teamID, name: LOCAL_TEAM.name, apiKey, isDefault: true }],
      }),
    },
    {
      method: "POST",
      pattern: "/access-tokens",
      handler: async () => {
        const accessToken = mintAccessToken(apiKey);
        if (!accessTokenValid(apiKey, accessToken))
          throw serviceError("internal", "minting failed");
        return { status: 201, body: { accessToken } };
      },
    },
  ];
}
