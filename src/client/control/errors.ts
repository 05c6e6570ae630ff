/**
 * The builders of the control client's errors: a non-success answer read
 * through the status table of `src/wire/control-status.ts`, and a call that got
 * no answer at all. Every failure of the control client goes through here.
 *
 * @module
 */

import type { ConfigSource, ResolvedConfig } from "../../config";
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

/**
 * Where the client's settings came from, for the messages of a refused key and
 * of a service that cannot be reached: which URL, from which source, with
 * which option names.
 */
export interface ServiceSetup {
  readonly apiUrl: string;
  readonly urlSource: ConfigSource;
  readonly keySource: ConfigSource;
  /** The user's names of the key and URL options (`api_key`, `apiKey`, ...). */
  readonly names: { readonly apiKey: string; readonly apiUrl: string };
}

/** The {@link ServiceSetup} of a resolved configuration. */
export function serviceSetup(config: ResolvedConfig): ServiceSetup {
  return {
    apiUrl: config.apiUrl,
    urlSource: config.source.apiUrl,
    keySource: config.source.apiKey,
    names: config.optionNames,
  };
}

/** True for a service on this machine (the local service), whose key `sandbox-iac serve` printed. */
function isLocal(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === "localhost" || host === "[::1]" || host.startsWith("127.");
  } catch {
    return false;
  }
}

function urlOrigin(setup: ServiceSetup): string {
  switch (setup.urlSource) {
    case "option":
      return `from ${setup.names.apiUrl}`;
    case "env":
      return `from ${ENV_VARS.apiUrl}`;
    case "domain":
      return `from ${ENV_VARS.domain}`;
    default:
      return `the local default: no ${ENV_VARS.apiUrl} or ${ENV_VARS.domain} set`;
  }
}

/** Why a 401 happened and how to fix it: a missing key and a refused one read differently. */
function unauthenticatedReason(setup: ServiceSetup): string {
  const local = isLocal(setup.apiUrl);
  const wanted = local
    ? "the API key `sandbox-iac serve` printed"
    : "an API key from the E2B dashboard";
  if (setup.keySource === "unset") {
    return (
      `no API key was sent to ${setup.apiUrl} (neither ${setup.names.apiKey} nor ${ENV_VARS.apiKey} is set): ` +
      `set ${ENV_VARS.apiKey} (or ${setup.names.apiKey}) to ${wanted}`
    );
  }
  const from = setup.keySource === "option" ? setup.names.apiKey : ENV_VARS.apiKey;
  return `the service at ${setup.apiUrl} refused the API key from ${from}: set it to ${wanted}`;
}

/** Why a connection failed and how to fix it: the URL tried, its source, the fix. */
function unreachableReason(setup: ServiceSetup, connection: string): string {
  const fix = isLocal(setup.apiUrl)
    ? `start the local service with \`sandbox-iac serve\`, or set ${ENV_VARS.apiUrl} (or ${setup.names.apiUrl}) to where the service runs`
    : `check ${ENV_VARS.apiUrl} (or ${setup.names.apiUrl}) and retry later`;
  return `cannot connect to ${setup.apiUrl} (${connection}; ${urlOrigin(setup)}): ${fix}`;
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
  setup?: ServiceSetup,
): SandboxIacError {
  const code = codeForStatus(status);
  if (code === "unauthenticated" && setup !== undefined) {
    // The service's own text points at e2b.dev even for a local key; ours
    // says which key was sent (or none), to which URL, and the fix.
    const remote = isLocal(setup.apiUrl) ? "" : ` (the service said: ${serverMessage(body)})`;
    return new SandboxIacError(code, `HTTP ${status}: ${unauthenticatedReason(setup)}${remote}`, {
      ...call,
      status,
    });
  }
  const hint = hints?.[code] ?? HINTS[code];
  const reason = `HTTP ${status}: ${serverMessage(body)}${hint ? `; ${hint}` : ""}`;
  return new SandboxIacError(code, reason, { ...call, status });
}

/** The error for a call that produced no HTTP answer (abort, timeout, connection failure, bug). */
export function errorFromFailure(
  call: FailedCall,
  error: unknown,
  why: { canceled: boolean; timedOutAfterMs?: number | undefined },
  setup?: ServiceSetup,
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
      setup
        ? unreachableReason(setup, connection)
        : `cannot connect (${connection}); ${HINTS.unavailable}`,
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
