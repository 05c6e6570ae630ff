/**
 * Template names (`[namespace/]alias[:tag]`) and generated identifiers.
 * Rules: docs/control-api.md#ids-and-names.
 *
 * @module
 */
import { randomBytes, randomUUID } from "node:crypto";
import { ApiError } from "../http";
import { DEFAULT_TAG } from "./constants";

const ALIAS_RE = /^[a-z0-9-_]+$/;
const TAG_RE = /^[a-z0-9-_.]+$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** Maximum length of a template name, tag included. */
export const MAX_NAME_LENGTH = 128;

/** A parsed template name. */
export interface TemplateName {
  /** `namespace/alias` or `alias`: the name without its tag. */
  name: string;
  /** The alias alone. */
  alias: string;
  /** The namespace, when one was given. */
  namespace?: string;
  /** The tag after `:`, when one was given. */
  tag?: string;
}

/**
 * Normalises (trim, lower-case) and validates `raw` as `[namespace/]alias[:tag]`.
 * Throws an {@link ApiError} 400 naming `field` and the rule that failed.
 */
export function parseTemplateName(raw: string, field: string): TemplateName {
  const value = raw.trim().toLowerCase();
  if (value.length === 0)
    throw new ApiError(400, `${field}: Name is required, got ${JSON.stringify(raw)}`);
  if (value.length > MAX_NAME_LENGTH) {
    throw new ApiError(
      400,
      `${field}: must be at most ${MAX_NAME_LENGTH} characters, got ${value.length}`,
    );
  }
  const slash = value.indexOf("/");
  const namespace = slash >= 0 ? value.slice(0, slash) : undefined;
  const rest = slash >= 0 ? value.slice(slash + 1) : value;
  const colon = rest.indexOf(":");
  const alias = colon >= 0 ? rest.slice(0, colon) : rest;
  const tag = colon >= 0 ? rest.slice(colon + 1) : undefined;
  if (namespace !== undefined && !ALIAS_RE.test(namespace)) {
    throw new ApiError(
      400,
      `${field}: namespace must match ${ALIAS_RE.source}, got ${JSON.stringify(namespace)}`,
    );
  }
  if (!ALIAS_RE.test(alias)) {
    throw new ApiError(
      400,
      `${field}: alias must match ${ALIAS_RE.source}, got ${JSON.stringify(alias)}: use lower-case letters, digits, '-' and '_'`,
    );
  }
  if (tag !== undefined) validateTag(tag, field);
  return {
    name: namespace !== undefined ? `${namespace}/${alias}` : alias,
    alias,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(tag !== undefined ? { tag } : {}),
  };
}

/** Validates a tag; throws an {@link ApiError} 400 naming `field` otherwise. Returns it normalised. */
export function validateTag(raw: string, field: string): string {
  const tag = raw.trim().toLowerCase();
  if (!TAG_RE.test(tag)) {
    throw new ApiError(
      400,
      `${field}: tag must match ${TAG_RE.source}, got ${JSON.stringify(raw)}`,
    );
  }
  if (UUID_RE.test(tag))
    throw new ApiError(400, `${field}: tag must not be a UUID, got ${JSON.stringify(raw)}`);
  return tag;
}

/**
 * Splits an id or name with an optional tag (`x`, `x:tag`, `ns/x:tag`) without
 * validating it; used for look-ups, where unknown shapes simply match nothing.
 */
export function splitTag(idOrName: string): { base: string; tag: string | undefined } {
  const value = idOrName.trim().toLowerCase();
  const slash = value.lastIndexOf("/");
  const colon = value.indexOf(":", slash + 1);
  if (colon < 0) return { base: value, tag: undefined };
  return { base: value.slice(0, colon), tag: value.slice(colon + 1) };
}

/** Joins a name and a tag, leaving out nothing: `name:tag`. */
export function withTag(name: string, tag: string = DEFAULT_TAG): string {
  return `${name}:${tag}`;
}

/** `length` random characters from `[a-z0-9]`. */
export function randomId(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = "";
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    const b = bytes[i];
    // 252 = 7 * 36: rejecting the rest keeps the distribution uniform
    if (b < 252) out += ID_ALPHABET[b % 36];
  }
  return out.length === length ? out : out + randomId(length - out.length);
}

/** A new template id: 20 characters from `[a-z0-9]`. */
export function newTemplateId(): string {
  return randomId(20);
}

/** A new build id: a UUID. */
export function newBuildId(): string {
  return randomUUID();
}

/** True when `value` is a UUID (a build id). */
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
