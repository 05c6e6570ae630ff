/**
 * zod at the control client's boundaries: arguments before any request
 * (→ `invalid_argument`) and response bodies after it (→ `contract_violation`).
 *
 * @module
 */

import type { z } from "zod";
import { describeValue, invalidArgument, SandboxIacError } from "../../errors";

type Issue = z.core.$ZodIssue;

/**
 * An object's optional properties without `undefined`: what {@link parseArgs}
 * returns, and what the generated request types (`prop?: T`) accept.
 */
export type Defined<T> = T extends object ? { [K in keyof T]: Exclude<T[K], undefined> } : T;

/**
 * Parses the caller's arguments; the first issue becomes an `invalid_argument`
 * naming the field. A top-level property the caller set to `undefined` is
 * dropped, as leaving it out would do (JSON and query strings have no
 * `undefined`), so the result fits the generated request types.
 */
export function parseArgs<S extends z.ZodType>(
  schema: S,
  value: unknown,
  operation: string,
): Defined<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return defined(result.data);
  const issue: Issue = result.error.issues[0];
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "arguments";
  throw invalidArgument(operation, field, valueAt(value, issue.path), allowedBy(issue));
}

/**
 * Parses a response body; a body that breaks the contract becomes a
 * `contract_violation` naming the field.
 */
export function parseResponse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  call: { operation: string; resourceId?: string | undefined; status?: number | undefined },
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue: Issue = result.error.issues[0];
  const field =
    issue.path.length > 0 ? `response.${issue.path.map(String).join(".")}` : "response body";
  const got = describeValue(valueAt(value, issue.path));
  return fail(
    new SandboxIacError(
      "contract_violation",
      `the service answered ${field} = ${got}, the contract requires ${allowedBy(issue)}; the service does not follow schema/control.openapi.yaml`,
      { ...call, field },
    ),
  );
}

/**
 * `value` without its top-level `undefined` properties: a request object built
 * from optional values, made to fit the generated types (`prop?: T`).
 */
export function defined<T>(value: T): Defined<T> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return value as Defined<T>;
  }
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Defined<T>;
}

function fail(error: SandboxIacError): never {
  throw error;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** Renders what the schema allows, e.g. `>= 1` or `a non-empty string`. */
function allowedBy(issue: Issue): string {
  switch (issue.code) {
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string")
        return min <= 1 ? "a non-empty string" : `at least ${min} characters`;
      if (issue.origin === "array" || issue.origin === "set")
        return `at least ${min} item${min === 1 ? "" : "s"}`;
      return issue.inclusive === false ? `> ${min}` : `>= ${min}`;
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") return `at most ${max} characters`;
      if (issue.origin === "array" || issue.origin === "set") return `at most ${max} items`;
      return issue.inclusive === false ? `< ${max}` : `<= ${max}`;
    }
    case "invalid_type":
      return issue.expected === "int" ? "an integer" : `a ${issue.expected}`;
    case "invalid_format":
      return issue.format === "regex" && "pattern" in issue && issue.pattern
        ? `a string matching ${String(issue.pattern)}`
        : `a valid ${issue.format}`;
    case "invalid_value":
      return `one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "not_multiple_of":
      return `a multiple of ${String(issue.divisor)}`;
    default:
      return issue.message;
  }
}
