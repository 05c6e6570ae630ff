/**
 * The grammar of the identifiers on the wire (docs/control-api.md#ids-and-names), for every
 * part that reads or makes one: config, clients, resources, the local service.
 *
 * - A sandbox ID is `[a-z0-9]+`; the service makes `i` + 20 such characters.
 *   envd routing (the `E2b-Sandbox-Id` header, `<port>-<sandboxID>.<domain>`)
 *   takes exactly that.
 * - Control API paths also take the legacy `<sandboxID>-<clientID>` form (old
 *   SDKs reported it as the sandbox ID); the part before the `-` is the sandbox.
 * - A template ID is 20 characters of `[a-z0-9]`; a build ID is a UUID.
 *
 * @module
 */
import { randomBytes, randomInt, randomUUID } from "node:crypto";

/** A sandbox ID, as envd routing and sandbox hostnames take it. */
export const SANDBOX_ID_PATTERN = /^[a-z0-9]+$/;

/** A sandbox ID as control API paths take it: `<sandboxID>[-<clientID>]`. */
export const SANDBOX_ID_PATH_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)?$/;

/** A sandbox ID as the service makes it: `i` + 20 characters of `[a-z0-9]`. */
export const NEW_SANDBOX_ID_PATTERN = /^i[a-z0-9]{20}$/;

/**
 * The Host of a request to a sandbox when no routing header is sent:
 * `<port>-<sandboxID>[-<clientID>].<domain>`; group 1 is the port, group 2
 * the sandbox ID.
 */
export const SANDBOX_HOST_PATTERN = /^(\d+)-([a-z0-9]+)(?:-[a-z0-9]+)?\./;

/** A template ID as the service makes it. */
export const TEMPLATE_ID_PATTERN = /^[a-z0-9]{20}$/;

/** A lower-case UUID. */
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A build ID: a UUID. Tags may never look like one. */
export const BUILD_ID_PATTERN = UUID_PATTERN;

/** A volume ID: a UUID. */
export const VOLUME_ID_PATTERN = UUID_PATTERN;

/** Longest volume or secret name. */
export const NAME_MAX_LENGTH = 128;

/** A volume name: 1 to 128 letters, digits, `_` or `-`. */
export const VOLUME_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,128}$/;

/** A secret name: a volume name's grammar, not starting with {@link SECRET_ID_PREFIX}. */
export const SECRET_NAME_PATTERN = new RegExp(VOLUME_NAME_PATTERN.source);

/** Prefix of every secret ID; reserved, so no secret name starts with it (in any case). */
export const SECRET_ID_PREFIX = "sec_";

/** True when `name` starts with {@link SECRET_ID_PREFIX} in any case. */
export function hasSecretIDPrefix(name: string): boolean {
  return name.toLowerCase().startsWith(SECRET_ID_PREFIX);
}

/** An example sandbox ID for messages. */
export const EXAMPLE_SANDBOX_ID = "i0123456789abcdefghij";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** What is wrong with an ID: what is allowed, and how to fix it when known. */
export interface IDProblem {
  /** What the field takes, phrased to follow "must be". */
  allowed: string;
  /** How to fix the value, when there is a specific fix. */
  fix?: string | undefined;
}

/** What a sandbox ID that envd routing takes looks like, to follow "must be". */
const SANDBOX_ID_ALLOWED = `a sandbox ID of lower-case letters and digits (${SANDBOX_ID_PATTERN.source}), like ${JSON.stringify(EXAMPLE_SANDBOX_ID)}`;

/** What a sandbox ID that control API paths take looks like, to follow "must be". */
export const SANDBOX_ID_PATH_ALLOWED = `a sandbox ID like ${JSON.stringify(EXAMPLE_SANDBOX_ID)} (${SANDBOX_ID_PATH_PATTERN.source}: lower-case letters and digits, optionally the legacy "-<clientID>")`;

/**
 * Why `value` is not a sandbox ID envd routing takes, or undefined when it is.
 * A legacy `<sandboxID>-<clientID>` is told the ID to use instead.
 */
export function sandboxIDProblem(value: unknown): IDProblem | undefined {
  if (typeof value === "string" && SANDBOX_ID_PATTERN.test(value)) return undefined;
  const legacy = typeof value === "string" ? parseSandboxIDPath(value) : undefined;
  if (legacy?.clientID !== undefined) {
    return {
      allowed: SANDBOX_ID_ALLOWED,
      fix: `drop the legacy "-<clientID>" suffix: use ${JSON.stringify(legacy.sandboxID)}`,
    };
  }
  return { allowed: SANDBOX_ID_ALLOWED };
}

/** Why `value` is not a sandbox ID a control API path takes, or undefined when it is. */
export function sandboxIDPathProblem(value: unknown): IDProblem | undefined {
  if (typeof value === "string" && SANDBOX_ID_PATH_PATTERN.test(value)) return undefined;
  return { allowed: SANDBOX_ID_PATH_ALLOWED };
}

/** A control API path's sandbox ID split into its parts. */
export interface SandboxIDPath {
  /** The sandbox ID: the part before the `-`. */
  sandboxID: string;
  /** The deprecated client ID after the `-`, when one was given. */
  clientID?: string | undefined;
}

/** Splits a control API path's sandbox ID; undefined when it is not one. */
export function parseSandboxIDPath(raw: string): SandboxIDPath | undefined {
  if (!SANDBOX_ID_PATH_PATTERN.test(raw)) return undefined;
  const dash = raw.indexOf("-");
  return dash < 0
    ? { sandboxID: raw }
    : { sandboxID: raw.slice(0, dash), clientID: raw.slice(dash + 1) };
}

/** True when `value` is a build ID (a UUID). */
export function isBuildID(value: string): boolean {
  return BUILD_ID_PATTERN.test(value);
}

/** `length` uniformly random characters from `[a-z0-9]`. */
export function randomID(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** A new sandbox ID: `i` + 20 characters of `[a-z0-9]`. */
export function newSandboxID(): string {
  return `i${randomID(20)}`;
}

/** A new (deprecated) client ID: 8 hex digits. */
export function newClientID(): string {
  return randomBytes(4).toString("hex");
}

/** A new template ID: 20 characters of `[a-z0-9]`. */
export function newTemplateID(): string {
  return randomID(20);
}

/** A new build ID: a UUID. */
export function newBuildID(): string {
  return randomUUID();
}
