/**
 * Sandbox ids (docs/control-api.md#ids-and-names): `i` + 20 characters of `[a-z0-9]`; paths
 * also accept the legacy `<sandboxID>-<clientID>` form.
 *
 * @module
 */
import { randomBytes, randomInt } from "node:crypto";
import { ApiError } from "../http";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A new sandbox id. */
export function newSandboxID(): string {
  let id = "i";
  for (let i = 0; i < 20; i++) id += ALPHABET[randomInt(ALPHABET.length)];
  return id;
}

/** A new (deprecated) client id: 8 hex digits. */
export function newClientID(): string {
  return randomBytes(4).toString("hex");
}

/**
 * The sandbox id of a path parameter: the part before a `-`.
 * Throws an ApiError 400 for more than one `-` or characters outside `[a-z0-9]`.
 */
export function parseSandboxID(raw: string): string {
  const parts = raw.split("-");
  const id = parts[0] ?? "";
  if (parts.length > 2 || !/^[a-z0-9]+$/.test(id)) {
    throw new ApiError(
      400,
      `Invalid sandbox ID ${JSON.stringify(raw.slice(0, 80))}: use the sandboxID returned by create, e.g. i0123456789abcdefghij`,
    );
  }
  return id;
}
