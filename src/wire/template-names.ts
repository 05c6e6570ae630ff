/**
 * Template names `[namespace/]alias[:tag]` and tags (docs/control-api.md#ids-and-names), for
 * the resources that check them and the local service that enforces them:
 * trimmed and lower-cased first; namespace and alias `^[a-z0-9-_]+$`; a tag
 * `^[a-z0-9-_.]+$` that is not a UUID; at most 128 characters, tag included;
 * `default` being the implicit tag.
 *
 * @module
 */
import { BUILD_ID_PATTERN } from "./ids";

/** Characters allowed in a namespace or an alias. */
const TEMPLATE_NAME_SEGMENT_PATTERN = /^[a-z0-9-_]+$/;
/** Characters allowed in a tag. */
const TEMPLATE_TAG_PATTERN = /^[a-z0-9-_.]+$/;
/** E2B's `maxLength` of a template name (tag included). */
export const MAX_TEMPLATE_NAME_LENGTH = 128;
/** The tag a build gets when none is given; it can never be deleted. */
export const DEFAULT_TAG = "default";

/** A template name split into its parts. */
export interface TemplateName {
  /** `[namespace/]alias`: the name without its tag. */
  name: string;
  /** The alias alone. */
  alias: string;
  /** The team namespace, when one was given. */
  namespace?: string | undefined;
  /** The tag after `:`, when one was given. */
  tag?: string | undefined;
}

/** Normalises a name or tag the way the service does before using it: trimmed, lower-cased. */
export function normaliseTemplateName(value: string): string {
  return value.trim().toLowerCase();
}

/**
 * Why `raw` (normalised first) is not a tag, as `tag must ...`; undefined when
 * it is one.
 */
export function tagProblem(raw: string): string | undefined {
  const tag = normaliseTemplateName(raw);
  if (!TEMPLATE_TAG_PATTERN.test(tag)) {
    return `tag must match ${TEMPLATE_TAG_PATTERN.source} (lower-case letters, digits, '-', '_', '.')`;
  }
  if (BUILD_ID_PATTERN.test(tag)) return "tag must not be a UUID (UUIDs are build IDs)";
  return undefined;
}

/**
 * Why `raw` (normalised first) is not a `[namespace/]alias[:tag]`, naming the
 * part that is wrong (`Name is required`, `alias must ...`, `tag must ...`);
 * undefined when it is one.
 */
export function templateNameProblem(raw: string): string | undefined {
  const value = normaliseTemplateName(raw);
  if (value.length === 0) return "Name is required";
  if (value.length > MAX_TEMPLATE_NAME_LENGTH) {
    return `name must be at most ${MAX_TEMPLATE_NAME_LENGTH} characters, tag included (it has ${value.length})`;
  }
  const { namespace, alias, tag } = parseTemplateName(value);
  if (namespace !== undefined && !TEMPLATE_NAME_SEGMENT_PATTERN.test(namespace)) {
    return `namespace must match ${TEMPLATE_NAME_SEGMENT_PATTERN.source} (lower-case letters, digits, '-', '_'; the form is [namespace/]alias[:tag])`;
  }
  if (!TEMPLATE_NAME_SEGMENT_PATTERN.test(alias)) {
    return `alias must match ${TEMPLATE_NAME_SEGMENT_PATTERN.source} (lower-case letters, digits, '-', '_'; the form is [namespace/]alias[:tag])`;
  }
  return tag === undefined ? undefined : tagProblem(tag);
}

/**
 * Splits `raw` (normalised first) into its parts without checking them: for a
 * name already checked, or a look-up where an unknown shape matches nothing.
 * The namespace ends at the first `/`, the tag starts at the first `:` after it.
 */
export function parseTemplateName(raw: string): TemplateName {
  const value = normaliseTemplateName(raw);
  const slash = value.indexOf("/");
  const namespace = slash >= 0 ? value.slice(0, slash) : undefined;
  const rest = slash >= 0 ? value.slice(slash + 1) : value;
  const colon = rest.indexOf(":");
  const alias = colon >= 0 ? rest.slice(0, colon) : rest;
  const tag = colon >= 0 ? rest.slice(colon + 1) : undefined;
  return {
    name: namespace !== undefined ? `${namespace}/${alias}` : alias,
    alias,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(tag !== undefined ? { tag } : {}),
  };
}
