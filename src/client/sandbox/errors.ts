/**
 * The one place where failures of the in-sandbox interface become
 * {@link SandboxIacError}s: Connect codes, HTTP statuses of the plain routes,
 * network failures and non-zero exits.
 *
 * HTTP statuses are first turned into the Connect code they stand for, so a
 * single table decides the project code; both tables are in
 * `src/wire/envd-status.ts`. Reference: docs/envd.md#connect-protocol-on-the-wire.
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { SandboxIacError, type ErrorCode } from "../../errors";
import { ERROR_CODE_BY_RPC_CODE, rpcCodeForHttpStatus } from "../../wire/envd-status";
import { ERROR_OUTPUT_TAIL_BYTES } from "./constants";

/** Who failed and on what: attached to every mapped error. */
export interface ErrorScope {
  /** The operation in API terms, e.g. `files.upload`. */
  operation: string;
  /** The sandbox the call went to. */
  sandboxID: string;
  /** The path, pid or watcher the call was about. @default the sandbox id */
  resourceId?: string | undefined;
  /** The caller's abort signal; an aborted one turns cancellations into `canceled`. @default none */
  signal?: AbortSignal | undefined;
}

/** Advice appended to messages, so the error says how to fix it. */
const FIX_BY_CODE: Partial<Record<ErrorCode, string>> = {
  unauthenticated:
    "pass the sandbox's envdAccessToken as accessToken, or check that the user exists in the sandbox",
  unavailable: "the sandbox may have been killed, paused or timed out; check that it is running",
  timeout: "raise timeoutMs, or pass 0 for no limit on commands",
  rate_limited: "retry later, or free disk space in the sandbox when it is full",
};

/**
 * Connect fails a call whose signal aborted with the signal's own reason
 * (wrapped, as its cause) unless that reason is an `AbortError`: a stop's
 * reason (`core/stop.ts`) then reads as `internal`, not as a cancellation.
 */
function endedByAbort(code: Code, scope: ErrorScope, cause: unknown): boolean {
  const signal = scope.signal;
  if (!signal?.aborted) return false;
  if (code === Code.Canceled) return true;
  return cause !== undefined && ConnectError.from(cause).cause === signal.reason;
}

function mapCode(code: Code, scope: ErrorScope, cause: unknown): ErrorCode {
  if (endedByAbort(code, scope, cause)) return "canceled";
  return ERROR_CODE_BY_RPC_CODE[code] ?? "internal";
}

function build(
  code: Code,
  detail: string,
  scope: ErrorScope,
  extra: { status?: number; cause?: unknown },
) {
  const errorCode = mapCode(code, scope, extra.cause);
  const fix = FIX_BY_CODE[errorCode];
  const reason = `${detail} (sandbox ${scope.sandboxID})${fix ? `: ${fix}` : ""}`;
  return new SandboxIacError(errorCode, reason, {
    operation: scope.operation,
    resourceId: scope.resourceId ?? scope.sandboxID,
    status: extra.status,
    rpcCode: codeToString(code),
    cause: extra.cause,
  });
}

/**
 * Whether `err` (or a cause of it) is a failed `connect` system call: nothing
 * listens where the sandbox should be. connect-node reads only some of these
 * as unavailable (a Unix socket that is gone, ENOENT, it reads as internal);
 * fetch reports them all as a failure to reach, as {@link fromFetchFailure} maps it.
 */
function failedToConnect(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === "object" && e !== null && depth < 8; depth++) {
    if ((e as { syscall?: unknown }).syscall === "connect") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Maps anything thrown by a Connect call (or our own code) to a {@link SandboxIacError}. */
export function fromRpcError(err: unknown, scope: ErrorScope): SandboxIacError {
  if (SandboxIacError.is(err)) return err;
  const ce = ConnectError.from(err);
  const code = failedToConnect(err) ? Code.Unavailable : ce.code;
  const name = codeToString(code);
  return build(code, `${name}: ${ce.rawMessage || "no message"}`, scope, { cause: err });
}

/**
 * Maps a non-2xx answer of a plain HTTP route. `body` is the response text;
 * envd sends `{code, message}` JSON, proxies may send anything.
 */
export function fromHttpStatus(status: number, body: string, scope: ErrorScope): SandboxIacError {
  let message = body.trim().slice(0, 500);
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") message = parsed.message;
  } catch {
    // Not JSON: keep the (trimmed) text; proxies answer HTML or plain text.
  }
  const detail = `HTTP ${status}${message ? `: ${message}` : ""}`;
  return build(rpcCodeForHttpStatus(status), detail, scope, { status });
}

/** Maps a fetch that never produced a response (connection refused, abort, timeout). */
export function fromFetchFailure(err: unknown, scope: ErrorScope): SandboxIacError {
  if (SandboxIacError.is(err)) return err;
  // DOMException is not always `instanceof Error` (other realms, e.g. test VMs): read the name.
  const rawName =
    typeof err === "object" && err !== null ? (err as { name?: unknown }).name : undefined;
  const name = typeof rawName === "string" ? rawName : "";
  if (name === "AbortError" || name === "TimeoutError") {
    const code = name === "TimeoutError" ? Code.DeadlineExceeded : Code.Canceled;
    return build(
      code,
      `the request was ${code === Code.Canceled ? "aborted" : "timed out"}`,
      scope,
      {
        cause: err,
      },
    );
  }
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
  const text = err instanceof Error ? err.message : String(err);
  return build(Code.Unavailable, `cannot reach the sandbox (${text}${cause})`, scope, {
    cause: err,
  });
}

/** What a finished command produced. */
export interface CommandResult {
  /** The exit code; -1 when the process was killed by a signal. */
  exitCode: number;
  /** Everything the command wrote to stdout, decoded as UTF-8. */
  stdout: string;
  /** Everything the command wrote to stderr, decoded as UTF-8. */
  stderr: string;
}

/** A `command_failed` error: a {@link SandboxIacError} that also carries the result. */
export type CommandFailedError = SandboxIacError & { readonly result: CommandResult };

function tail(text: string): string {
  const trimmed = text.trimEnd();
  return trimmed.length > ERROR_OUTPUT_TAIL_BYTES
    ? `...${trimmed.slice(trimmed.length - ERROR_OUTPUT_TAIL_BYTES)}`
    : trimmed;
}

/**
 * Builds the `command_failed` error for a non-zero exit. The message quotes the
 * command, the exit code, the sandbox and the tail of stderr (stdout when
 * stderr is empty); the full output is on `result`.
 */
export function commandFailed(
  command: string,
  result: CommandResult,
  scope: {
    operation: string;
    sandboxID: string;
    pid?: number | undefined;
    status?: string | undefined;
  },
): CommandFailedError {
  const output = tail(result.stderr) || tail(result.stdout);
  const how =
    result.exitCode === -1 && scope.status
      ? `was stopped (${scope.status})`
      : `exited with code ${result.exitCode}`;
  const reason =
    `command ${JSON.stringify(command)} ${how} in sandbox ${scope.sandboxID}` +
    (output ? `; output:\n${output}` : "; it printed nothing");
  const err = new SandboxIacError("command_failed", reason, {
    operation: scope.operation,
    resourceId: scope.pid === undefined ? scope.sandboxID : `pid ${scope.pid}`,
  });
  const { exitCode, stdout, stderr } = result;
  Object.defineProperty(err, "result", {
    value: Object.freeze({ exitCode, stdout, stderr }),
    enumerable: true,
  });
  return err as CommandFailedError;
}

/** The command result carried by a `command_failed` error, if `err` is one. */
export function commandResultOf(err: unknown): CommandResult | undefined {
  if (!SandboxIacError.hasCode(err, "command_failed")) return undefined;
  return (err as Partial<CommandFailedError>).result;
}
