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
import { ApiError } from "../http";

/**
 * Normalises and validates `raw` as `[namespace/]alias[:tag]`.
 * Throws an {@link ApiError} 400 naming `field` and the rule that failed.
 */
export function requireTemplateName(raw: string, field: string): TemplateName {
  const problem = templateNameProblem(raw);
  if (problem !== undefined) {
    throw new ApiError(400, `${field}: ${problem}, got ${JSON.stringify(raw.slice(0, 200))}`);
  }
  return parseTemplateName(raw);
}

/** Validates a tag; throws an {@link ApiError} 400 naming `field` otherwise. Returns it normalised. */
export function requireTag(raw: string, field: string): string {
  const problem = tagProblem(raw);
  if (problem !== undefined)
    throw new ApiError(400, `${field}: ${problem}, got ${JSON.stringify(raw)}`);
  return normaliseTemplateName(raw);
}
