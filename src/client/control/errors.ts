/**
 * The builders of the control client's errors: a non-success answer read
 * through the status table of `src/wire/control-status.ts`, and a call that got
 * no answer at all. Every failure of the control client goes through here.
 *
 * @module
 */

import { type ErrorCode, SandboxIacError } from "../../errors";
import { ENV_VARS } from "../../wire/control";
import { codeForStatus } from "../../wire/control-status";
import { connectionErrorCode } from "../retry";

/** What a failed call was doing. */
export interface FailedCall {
  /** e.g. `sandboxes.get`. */
  operation: string;
  /** The sandbox, template or build the call was about. */
  resourceId?: string | undefined;
}

/** How to fix it, per code, in the user's terms. */
const HINTS: Partial<Record<ErrorCode, string>> = {
  unauthenticated: `check the API key (the apiKey option or ${ENV_VARS.apiKey})`,
  permission_denied: "the API key's team may not access this resource",
  rate_limited: "slow down or retry later",
  unavailable: `the service is unreachable or busy; check ${ENV_VARS.apiUrl} and retry later`,
  timeout: "the service took too long; retry or raise timeoutMs",
};

/**
 * The error for a non-success HTTP answer. `body` is what openapi-fetch parsed:
 * the `Error` object, or the raw text when the body was not JSON. `hints`
 * replace the usual fix of a code where the call knows better.
 */
export function errorFromResponse(
  call: FailedCall,
  status: number,
  body: unknown,
  hints?: Partial<Record<ErrorCode, string>>,
): SandboxIacError {
  const code = codeForStatus(status);
  const hint = hints?.[code] ?? HINTS[code];
  const reason = `HTTP ${status}: ${serverMessage(body)}${hint ? `; ${hint}` : ""}`;
  return new SandboxIacError(code, reason, { ...call, status });
}

/** The error for a call that produced no HTTP answer (abort, timeout, connection failure, bug). */
export function errorFromFailure(
  call: FailedCall,
  error: unknown,
  why: { canceled: boolean; timedOutAfterMs?: number | undefined },
): SandboxIacError {
  if (SandboxIacError.is(error)) return error;
  if (why.canceled)
    return new SandboxIacError("canceled", "the caller aborted the call", {
      ...call,
      cause: error,
    });
  if (why.timedOutAfterMs !== undefined) {
    return new SandboxIacError(
      "timeout",
      `no answer within ${why.timedOutAfterMs} ms; ${HINTS.timeout}`,
      {
        ...call,
        cause: error,
      },
    );
  }
  const connection = connectionErrorCode(error);
  if (connection !== undefined) {
    return new SandboxIacError(
      "unavailable",
      `cannot connect (${connection}); ${HINTS.unavailable}`,
      {
        ...call,
        cause: error,
      },
    );
  }
  if (error instanceof SyntaxError) {
    return new SandboxIacError(
      "contract_violation",
      `the success body is not valid JSON (${error.message})`,
      {
        ...call,
        cause: error,
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxIacError("internal", `unexpected failure: ${message}`, {
    ...call,
    cause: error,
  });
}

function serverMessage(body: unknown): string {
  if (typeof body === "object" && body !== null) {
    const { message, error_code: errorCode } = body as { message?: unknown; error_code?: unknown };
    if (typeof message === "string" && message !== "") {
      return typeof errorCode === "string" ? `${message} (${errorCode})` : message;
    }
  }
  if (typeof body === "string" && body.trim() !== "") {
    const text = body.trim().replace(/\s+/g, " ");
    return text.length > 200 ? `${text.slice(0, 197)}...` : text;
  }
  return "the response carried no error message";
}
