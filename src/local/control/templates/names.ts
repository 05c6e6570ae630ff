/**
 * Template names and tags in the service's requests: the grammar is the
 * wire's (src/wire/template-names.ts); this maps a bad one to E2B's 400
 * naming the field.
 *
 * @module
 */
import {
  parseTemplateName,
  tagProblem,
  templateNameProblem,
  normaliseTemplateName,
  type TemplateName,
} from "../../../wire/template-names";
import { serviceError } from "../http";

/**
 * Normalises and validates `raw` as `[namespace/]alias[:tag]`.
 * Throws `invalid_argument` naming `field` and the rule that failed.
 */
export function requireTemplateName(raw: string, field: string): TemplateName {
  const problem = templateNameProblem(raw);
  if (problem !== undefined) {
    throw serviceError(
      "invalid_argument",
      `${field}: ${problem}, got ${JSON.stringify(raw.slice(0, 200))}`,
    );
  }
  return parseTemplateName(raw);
}

/** Validates a tag; throws `invalid_argument` naming `field` otherwise. Returns it normalised. */
export function requireTag(raw: string, field: string): string {
  const problem = tagProblem(raw);
  if (problem !== undefined)
    throw serviceError("invalid_argument", `${field}: ${problem}, got ${JSON.stringify(raw)}`);
  return normaliseTemplateName(raw);
}
