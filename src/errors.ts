/**
 * The one error type of sandbox-iac.
 *
 * Every failure the project raises (bad input, a remote refusal, a broken
 * contract, a failed command) is a {@link SandboxIacError} with a code from the
 * closed set {@link ErrorCode}. Callers branch on `code`, never on the class name
 * or the message text.
 *
 * @module
 */

/**
 * The closed set of error codes.
 *
 * - `invalid_argument`: the caller's input is wrong; nothing was sent or changed.
 * - `unauthenticated`: the API key or access token is missing or wrong.
 * - `permission_denied`: the credentials are valid but not allowed to do this.
 * - `not_found`: the sandbox, template, snapshot, file or process does not exist.
 * - `already_exists`: the thing to create is already there.
 * - `conflict`: the resource is in the wrong state for the operation (HTTP 409).
 * - `rate_limited`: the service asked us to slow down (HTTP 429).
 * - `unavailable`: the service or sandbox cannot be reached, or answered 502/503.
 * - `timeout`: the call or the process ran out of time.
 * - `canceled`: the caller aborted the call.
 * - `contract_violation`: the service answered something the contract forbids.
 * - `command_failed`: a process in a sandbox exited with a non-zero code.
 * - `build_failed`: a template build ended in `error`.
 * - `unsupported`: the operation is not supported by this service.
 * - `internal`: a bug or an unexpected failure; the cause says more.
 */
export const ERROR_CODES = [
  "invalid_argument",
  "unauthenticated",
  "permission_denied",
  "not_found",
  "already_exists",
  "conflict",
  "rate_limited",
  "unavailable",
  "timeout",
  "canceled",
  "contract_violation",
  "command_failed",
  "build_failed",
  "unsupported",
  "internal",
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** What {@link SandboxIacError.from} knows about the failed operation. */
export interface ErrorContext {
  /** What was being done, e.g. `templates.saveCatalog`. */
  operation: string;
  /** The resource the operation was about. @default none */
  resourceId?: string | undefined;
  /**
   * The code of a failure that is not recognised (not our error, not an abort).
   * @default "internal"
   */
  code?: ErrorCode | undefined;
  /** The HTTP status to answer, when it is not the code's usual one. @default none */
  status?: number | undefined;
}

/** Structured fields carried by every {@link SandboxIacError}. */
export interface ErrorDetails {
  /** What was being done, in API terms, e.g. `sandboxes.get` or `files.write`. */
  operation: string;
  /** The sandbox, template, snapshot, path or process the operation was about. */
  resourceId?: string | undefined;
  /** The HTTP status when the error came off an HTTP response. */
  status?: number | undefined;
  /** The Connect code (e.g. `not_found`) when the error came off an RPC. */
  rpcCode?: string | undefined;
  /** The input field at fault, for `invalid_argument`. */
  field?: string | undefined;
  /** The underlying error. */
  cause?: unknown;
}

const BRAND = Symbol.for("sandbox-iac.error");

/**
 * The project's single error type.
 *
 * The message follows one template: what failed (operation and resource), then
 * the reason in the user's terms: the value received, what is allowed, and how
 * to fix it. Secrets never appear in it; see {@link redact}.
 */
export class SandboxIacError extends Error {
  /** The closed error code. */
  readonly code: ErrorCode;
  /** What was being done, e.g. `sandboxes.create`. */
  readonly operation: string;
  /** The resource the operation was about, when known. */
  readonly resourceId: string | undefined;
  /** The HTTP status, when the error came off an HTTP response. */
  readonly status: number | undefined;
  /** The Connect RPC code, when the error came off an RPC. */
  readonly rpcCode: string | undefined;
  /** The input field at fault, for `invalid_argument`. */
  readonly field: string | undefined;
  /**
   * Why it failed, without the operation in front (redacted): what a caller
   * quotes when it puts the failure inside a message of its own.
   */
  readonly reason: string;

  constructor(code: ErrorCode, reason: string, details: ErrorDetails) {
    const subject = details.resourceId
      ? `${details.operation} (${details.resourceId})`
      : details.operation;
    super(redact(`${subject} failed: ${reason}`), { cause: details.cause });
    this.name = "SandboxIacError";
    this.code = code;
    this.reason = redact(reason);
    this.operation = details.operation;
    this.resourceId = details.resourceId;
    this.status = details.status;
    this.rpcCode = details.rpcCode;
    this.field = details.field;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True when `err` is a {@link SandboxIacError}, even across package copies. */
  static is(err: unknown): err is SandboxIacError {
    return (
      typeof err === "object" && err !== null && (err as Record<symbol, unknown>)[BRAND] === true
    );
  }

  /**
   * `err` as a {@link SandboxIacError}: returned as is when it is one already;
   * otherwise wrapped, with `err` as the cause and its message as the reason.
   * An abort becomes `canceled`, a timeout `timeout`, anything else
   * `context.code` (default `internal`). Replaces `err as Error` casts: a thrown
   * value need not be an Error at all.
   */
  static from(err: unknown, context: ErrorContext): SandboxIacError {
    if (SandboxIacError.is(err)) return err;
    const details = {
      operation: context.operation,
      resourceId: context.resourceId,
      status: context.status,
      cause: err,
    };
    // DOMException is not always `instanceof Error` (other realms): read the name.
    const name = (err as { name?: unknown } | null | undefined)?.name;
    if (name === "AbortError") return new SandboxIacError("canceled", reasonOf(err), details);
    if (name === "TimeoutError") return new SandboxIacError("timeout", reasonOf(err), details);
    return new SandboxIacError(context.code ?? "internal", reasonOf(err), details);
  }

  /** True when `err` is a {@link SandboxIacError} with the given code. */
  static hasCode(err: unknown, code: ErrorCode): err is SandboxIacError {
    return SandboxIacError.is(err) && err.code === code;
  }
}

/**
 * The message of anything thrown: an Error's message (its reason when it is a
 * {@link SandboxIacError}), a string as is, anything else rendered short.
 */
function reasonOf(err: unknown): string {
  if (SandboxIacError.is(err)) return err.reason;
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "string") return err;
  const message = (err as { message?: unknown } | null | undefined)?.message;
  return typeof message === "string" ? message : describeValue(err);
}

/**
 * Builds an `invalid_argument` error in the project's message template:
 * `<field> must be <allowed>, got <value>: <fix>`.
 */
export function invalidArgument(
  operation: string,
  field: string,
  value: unknown,
  allowed: string,
  fix?: string,
): SandboxIacError {
  const shown = describeValue(value);
  const reason = `${field} must be ${allowed}, got ${shown}${fix ? `: ${fix}` : ""}`;
  return new SandboxIacError("invalid_argument", reason, { operation, field });
}

/** Renders a received value for an error message, short and without secrets. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") {
    const s = value.length > 80 ? `${value.slice(0, 77)}...` : value;
    return JSON.stringify(s);
  }
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "function" || typeof value === "symbol") return typeof value;
  try {
    const s = JSON.stringify(value);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    // Cyclic objects cannot be shown; their type is the useful part.
    return Array.isArray(value) ? "an array" : "an object";
  }
}

/**
 * Credentials recognisable by their shape alone: E2B API keys (`e2b_...`,
 * `sk_e2b_...`), URL signatures and the values of credential headers. A bare
 * hex string is not among them: a sha256sum or an id prints as it is, and the
 * secrets without a shape of their own are redacted by value (see
 * {@link registerSecret}).
 */
const SECRET_PATTERNS: RegExp[] = [
  /e2b_[0-9a-f]{8,}/gi,
  /sk_e2b_[0-9a-z]+/gi,
  /(signature=)v1_[A-Za-z0-9+/_-]+/g,
  /((?:x-api-key|x-access-token|authorization)["']?\s*[:=]\s*["']?)[^\s"',}]+/gi,
];

/** Values shorter than this are not registered: redacting them would blank ordinary words. */
const MIN_SECRET_LENGTH = 6;

/**
 * The secret values this process knows, by their first
 * {@link MIN_SECRET_LENGTH} characters, each list longest first. A service
 * registers a token per sandbox it ever created: looking up the text's
 * characters keeps a redaction as cheap with 100,000 of them as with one,
 * where sorting and searching for every value on every log line did not.
 */
const secretsByPrefix = new Map<string, string[]>();

/**
 * Registers a value this process knows to be secret (an API key, a sandbox
 * access token, a Secret's value, a sensitive input): from now on
 * {@link redact} replaces it wherever it appears. Values shorter than six
 * characters are ignored.
 */
export function registerSecret(value: string | null | undefined): void {
  if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) return;
  const prefix = value.slice(0, MIN_SECRET_LENGTH);
  const alike = secretsByPrefix.get(prefix) ?? [];
  if (alike.includes(value)) return;
  alike.push(value);
  alike.sort((a, b) => b.length - a.length);
  secretsByPrefix.set(prefix, alike);
}

/**
 * Forgets a value given to {@link registerSecret} once nothing can use it any
 * more (a deleted sandbox's access tokens): a service that registered each
 * token for good kept every token it ever made, two per sandbox it created.
 */
export function forgetSecret(value: string): void {
  const prefix = value.slice(0, MIN_SECRET_LENGTH);
  const alike = secretsByPrefix.get(prefix);
  if (!alike) return;
  const left = alike.filter((s) => s !== value);
  if (left.length > 0) secretsByPrefix.set(prefix, left);
  else secretsByPrefix.delete(prefix);
}

/** {@link registerSecret} for every string in `value` (map values, list items, at any depth). */
export function registerSecretsIn(value: unknown): void {
  if (typeof value === "string") registerSecret(value);
  else if (Array.isArray(value)) value.forEach(registerSecretsIn);
  else if (value !== null && typeof value === "object")
    Object.values(value).forEach(registerSecretsIn);
}

/** `text` with each registered secret in it (the longest one where several start alike) replaced. */
function redactKnown(text: string): string {
  let out = "";
  let kept = 0;
  for (let i = 0; i + MIN_SECRET_LENGTH <= text.length;) {
    const alike = secretsByPrefix.get(text.slice(i, i + MIN_SECRET_LENGTH));
    const secret = alike?.find((s) => text.startsWith(s, i));
    if (secret === undefined) {
      i++;
      continue;
    }
    out += `${text.slice(kept, i)}[redacted]`;
    i += secret.length;
    kept = i;
  }
  return kept === 0 ? text : out + text.slice(kept);
}

/**
 * Replaces the secret values this process knows ({@link registerSecret}) and
 * credentials recognisable by shape (API keys, URL signatures, credential
 * headers) in `text` with `[redacted]`, so that they never reach logs, state
 * files or error messages in clear. Hashes and ids print as they are.
 */
export function redact(text: string): string {
  let out = secretsByPrefix.size > 0 ? redactKnown(text) : text;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (match: string, prefix?: unknown) =>
      typeof prefix === "string" && match.startsWith(prefix) ? `${prefix}[redacted]` : "[redacted]",
    );
  }
  return out;
}
