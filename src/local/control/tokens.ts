/**
 * Credentials of the local service: the API key, the per-service secret that
 * derives sandbox access tokens and `/files` URL
 * signatures (docs/control-api.md#ids-and-names and docs/envd.md#authentication-users-and-headers).
 *
 * @module
 */
import { createHmac, randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { forgetSecret, registerSecret } from "../../errors";
import { writeFileAtomic } from "./state-file";

/** File in the data dir holding the generated API key (mode 0600). */
export const API_KEY_FILE = "api-key";
/** File in the data dir holding the token secret (mode 0600). */
export const TOKEN_SECRET_FILE = "token-secret";

/** A new API key: `e2b_` followed by 40 hex digits. */
export function newApiKey(): string {
  return `e2b_${randomBytes(20).toString("hex")}`;
}

/** Reads a secret file of the data dir, creating it with `make()` on first use. */
export async function loadOrCreateSecret(
  dataDir: string,
  file: string,
  make: () => string,
): Promise<string> {
  const full = path.join(dataDir, file);
  try {
    const value = (await fs.readFile(full, "utf8")).trim();
    if (value) return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const value = make();
  await writeFileAtomic(full, `${value}\n`, 0o600);
  return value;
}

/** The hex token secret: 32 random bytes. */
export function newTokenSecret(): string {
  const secret = randomBytes(32).toString("hex");
  registerSecret(secret);
  return secret;
}

/** Hex HMAC-SHA256 of `message` under the service secret. */
function hmacOf(secret: string, message: string): string {
  return createHmac("sha256", secret).update(message).digest("hex");
}

/** The sandbox's `envdAccessToken`: hex HMAC-SHA256 of its id under the service secret. */
export function envdAccessToken(secret: string, sandboxID: string): string {
  const token = hmacOf(secret, sandboxID);
  registerSecret(token);
  return token;
}

/**
 * The sandbox's `trafficAccessToken` (ports not public): an HMAC of its id
 * under the service secret, in another domain than the envd token so that
 * neither reveals the other.
 */
export function trafficAccessToken(secret: string, sandboxID: string): string {
  const token = hmacOf(secret, `traffic:${sandboxID}`);
  registerSecret(token);
  return token;
}

/**
 * Stops redacting a deleted sandbox's tokens: they open nothing any more, and
 * a service that kept them registered held two for every sandbox it ever made.
 */
export function forgetSandboxTokens(secret: string, sandboxID: string): void {
  forgetSecret(hmacOf(secret, sandboxID));
  forgetSecret(hmacOf(secret, `traffic:${sandboxID}`));
}
