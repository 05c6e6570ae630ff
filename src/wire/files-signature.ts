/**
 * The signature of a `/files` URL (docs/envd.md#authentication-users-and-headers), shared by the
 * client that signs links, the agent that checks them, and the local service
 * that routes unrouted links by them.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Prefix of every `/files` URL signature. */
const FILES_SIGNATURE_PREFIX = "v1_";

/** What a signature covers. */
export interface FilesSignatureInput {
  /** The raw `path` query value, exactly as sent. */
  path: string;
  /** `read` for GET, `write` for POST. */
  operation: "read" | "write";
  /** The `username` query value; "" when none is sent. */
  user: string;
  /** The sandbox's access token. */
  accessToken: string;
  /**
   * The `signature_expiration` query value (Unix seconds), as sent.
   * @default none: the signature never expires
   */
  expiration?: string | number | undefined;
}

/**
 * `"v1_" + base64_nopad(sha256("<path>:<op>:<user>:<token>[:<exp>]"))`.
 * The result is a credential: never log it.
 */
export function filesSignature(input: FilesSignatureInput): string {
  const parts = [input.path, input.operation, input.user, input.accessToken];
  if (input.expiration !== undefined) parts.push(String(input.expiration));
  const digest = createHash("sha256").update(parts.join(":"), "utf8").digest("base64");
  return FILES_SIGNATURE_PREFIX + digest.replace(/=+$/, "");
}
