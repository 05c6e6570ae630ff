/**
 * Template names `[namespace/]alias[:tag]` and tags, per docs/control-api.md#ids-and-names:
 * trimmed and lower-cased, namespace and alias `^[a-z0-9-_]+$`, a tag
 * `^[a-z0-9-_.]+$` that is not a UUID, `default` being the implicit tag.
 *
 * @module
 */

/** Characters allowed in a namespace or an alias. */
export const NAME_SEGMENT_PATTERN = /^[a-z0-9-_]+$/;
/** Characters allowed in a tag. */
export const TAG_PATTERN = /^[a-z0-9-_.]+$/;
/** A tag may not look like a build ID. */
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The tag a build gets when none is given. */
export const DEFAULT_TAG = "default";

/** A template name split into its parts. */
export interface ParsedTemplateName {
  /** The team namespace, when given. */
  namespace?: string;
  /** The alias. */
  alias: string;
  /** The tag, when given after `:`. */
  tag?: string;
  /** `[namespace/]alias`, the name without its tag. */
  base: string;
}

/** Normalises a name or tag the way the service does before using it. */
export function normaliseName(value: string): string {
  return value.trim().toLowerCase();
}

/** Why `tag` is not a valid tag, or undefined when it is. */
export function tagProblem(tag: string): string | undefined {
  if (!TAG_PATTERN.test(tag))
    return "must match ^[a-z0-9-_.]+$ (lower-case letters, digits, '-', '_', '.')";
  if (UUID_PATTERN.test(tag)) return "must not be a UUID (UUIDs are build IDs)";
  return undefined;
}

/** Why `name` is not a valid `[namespace/]alias[:tag]`, or undefined when it is. */
export function nameProblem(name: string): string | undefined {
  const [head, tag, ...rest] = name.split(":");
  if (rest.length > 0) return "must hold at most one ':' (form [namespace/]alias[:tag])";
  if (tag !== undefined) {
    const problem = tagProblem(tag);
    if (problem) return `has a tag that ${problem}`;
  }
  const segments = (head ?? "").split("/");
  if (segments.length > 2) return "must hold at most one '/' (form [namespace/]alias[:tag])";
  for (const segment of segments) {
    if (!NAME_SEGMENT_PATTERN.test(segment)) {
      return "must be [namespace/]alias[:tag] where namespace and alias match ^[a-z0-9-_]+$";
    }
  }
  return undefined;
}

/** Splits a valid, normalised name into its parts. */
export function parseTemplateName(name: string): ParsedTemplateName {
  const [head = "", tag] = name.split(":");
  const slash = head.indexOf("/");
  const parsed: ParsedTemplateName = {
    alias: slash === -1 ? head : head.slice(slash + 1),
    base: head,
  };
  if (slash !== -1) parsed.namespace = head.slice(0, slash);
  if (tag !== undefined) parsed.tag = tag;
  return parsed;
}

/**
 * The tags a build of `name` with `tags` ends up with: the tag carried by the
 * name, then `tags`, deduplicated and sorted; `default` when there is none.
 */
export function desiredTags(name: string, tags: readonly string[] | undefined): string[] {
  const { tag } = parseTemplateName(name);
  const all = new Set<string>([...(tag ? [tag] : []), ...(tags ?? [])]);
  if (all.size === 0) all.add(DEFAULT_TAG);
  return [...all].sort();
}
