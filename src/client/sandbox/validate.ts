/**
 * Argument checks run before any request, so a bad call fails with
 * `invalid_argument` naming the field instead of a remote error.
 *
 * @module
 */
import { invalidArgument } from "../../errors";

/** A process, chosen by pid or by the tag it was started with. */
export type ProcessSelectorInput = number | { pid: number } | { tag: string };

const UINT32_MAX = 0xffff_ffff;
/** Terminal sizes are 16-bit in the kernel's `winsize`. */
const PTY_DIMENSION_MAX = 0xffff;

/** A non-empty path; envd would silently read an empty one as the workdir. */
export function checkPath(operation: string, field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0) {
    throw invalidArgument(
      operation,
      field,
      value,
      "a non-empty path",
      "pass an absolute path or one relative to the user's home",
    );
  }
  if (value.includes("\0")) {
    throw invalidArgument(operation, field, value, "a path without NUL bytes");
  }
  return value;
}

/** A user name for `Authorization: Basic base64("<user>:")`; `:` would break that format. */
export function checkUser(operation: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.includes(":")) {
    throw invalidArgument(
      operation,
      "user",
      value,
      "a non-empty user name without ':'",
      "omit user to act as the sandbox's default user",
    );
  }
  return value;
}

/** A process id: an integer from 1 to 2^32-1. */
export function checkPid(operation: string, value: unknown, field = "pid"): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > UINT32_MAX) {
    throw invalidArgument(
      operation,
      field,
      value,
      "a positive integer process id",
      "use the pid returned by start() or list()",
    );
  }
  return value;
}

/** Normalizes a selector to the oneof shape of `process.ProcessSelector`. */
export function checkSelector(
  operation: string,
  value: unknown,
): { case: "pid"; value: number } | { case: "tag"; value: string } {
  if (typeof value === "number")
    return { case: "pid", value: checkPid(operation, value, "selector") };
  if (typeof value === "object" && value !== null) {
    const v = value as { pid?: unknown; tag?: unknown };
    if (v.pid !== undefined && v.tag === undefined)
      return { case: "pid", value: checkPid(operation, v.pid, "selector.pid") };
    if (v.tag !== undefined && v.pid === undefined) {
      if (typeof v.tag === "string" && v.tag.length > 0) return { case: "tag", value: v.tag };
      throw invalidArgument(operation, "selector.tag", v.tag, "a non-empty tag");
    }
  }
  throw invalidArgument(
    operation,
    "selector",
    value,
    "a pid, { pid } or { tag }",
    "pass exactly one of pid or tag",
  );
}

/** A terminal dimension (`cols`, `rows`): 1 to 65535. */
export function checkPtyDimension(operation: string, field: string, value: unknown): number {
  if (
    typeof value !== "number" ||
    !Number.isInteger(value) ||
    value < 1 ||
    value > PTY_DIMENSION_MAX
  ) {
    throw invalidArgument(operation, field, value, "an integer from 1 to 65535");
  }
  return value;
}

/** A duration in milliseconds: finite and not negative; 0 means no limit. */
export function checkTimeoutMs(operation: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw invalidArgument(
      operation,
      "timeoutMs",
      value,
      "a number of milliseconds >= 0",
      "pass 0 for no limit",
    );
  }
  return Math.floor(value);
}

/** A listing depth: an integer of at least 1 (envd treats 0 as 1). */
export function checkDepth(operation: string, value: unknown): number {
  if (value === undefined) return 1;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > UINT32_MAX) {
    throw invalidArgument(
      operation,
      "depth",
      value,
      "an integer >= 1",
      "use 1 for the direct children only",
    );
  }
  return value;
}

/** A non-empty command string. */
export function checkCommand(operation: string, value: unknown): string {
  if (typeof value !== "string" || value.trim().length === 0) {
    throw invalidArgument(operation, "cmd", value, "a non-empty command");
  }
  return value;
}

/** A string map such as `envs`: every value must be a string. */
export function checkStringMap(
  operation: string,
  field: string,
  value: unknown,
): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidArgument(operation, field, value, "an object of string values");
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw invalidArgument(operation, `${field}.${k}`, v, "a string");
  }
  return value as Record<string, string>;
}

/** An expiry in whole seconds from now, at least 1. */
export function checkExpiresIn(operation: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw invalidArgument(operation, "expiresInSeconds", value, "a whole number of seconds >= 1");
  }
  return value;
}
