/**
 * The access-token check and `/files` URL signatures (docs/envd.md#authentication-users-and-headers).
 *
 * @module
 */
import { filesSignature } from "../wire/files-signature";
import { safeEqual } from "../wire/safe-equal";

/** True when a token is set and `given` is that token. */
export function tokenMatches(token: string | undefined, given: string | undefined): boolean {
  return token !== undefined && given !== undefined && safeEqual(token, given);
}

/** Outcome of a signature check. */
export type SignatureCheck = { ok: true } | { ok: false; message: string };

/** Checks the `signature` / `signature_expiration` query of a `/files` request. */
export function checkSignature(
  token: string,
  query: URLSearchParams,
  op: "read" | "write",
  nowUnix: number = Math.floor(Date.now() / 1000),
): SignatureCheck {
  const signature = query.get("signature");
  if (!signature)
    return { ok: false, message: "missing signature query parameter or access token" };
  const expiration = query.get("signature_expiration") ?? undefined;
  if (expiration !== undefined) {
    const exp = Number(expiration);
    if (!Number.isInteger(exp)) return { ok: false, message: "invalid signature expiration" };
    if (exp < nowUnix) return { ok: false, message: "signature is already expired" };
  }
  const expected = filesSignature({
    path: query.get("path") ?? "",
    operation: op,
    user: query.get("username") ?? "",
    accessToken: token,
    expiration,
  });
  return safeEqual(expected, signature)
    ? { ok: true }
    : { ok: false, message: "invalid signature" };
}
