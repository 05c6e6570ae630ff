/**
 * Runs one control-API call: per-call timeout, retries for idempotent calls,
 * error mapping and response validation. Every method of the control client
 * goes through {@link invoke}.
 *
 * @module
 */

import type { Client } from "openapi-fetch";
import type { z } from "zod";
import { type ErrorCode, redact, registerSecret, SandboxIacError } from "../../errors";
import type { paths } from "../../gen/control.gen";
import {
  type AttemptOutcome,
  classifyError,
  classifyResponse,
  type RetryPolicy,
  withRetries,
} from "../retry";
import { errorFromFailure, errorFromResponse, type ServiceSetup } from "./errors";
import { isIdempotent, type OperationName } from "./operations";
import { parseResponse } from "./validate";

/** Options every control-client method accepts. */
export interface CallOptions {
  /**
   * Aborts the call (and any retry wait); the error code is then `canceled`.
   * @default none
   */
  signal?: AbortSignal | undefined;
  /**
   * Deadline of the whole call, retries included; the error code is then `timeout`.
   * @default the client's `timeoutMs` (60 000 ms)
   */
  timeoutMs?: number | undefined;
  /**
   * Extra request headers.
   * @default none
   */
  headers?: Record<string, string> | undefined;
}

/** What the client's methods share. */
export interface CallContext {
  /** The typed openapi-fetch client, with the API key header set. */
  api: Client<paths>;
  /** The injected fetch, for the calls outside the API's paths (an upload link). */
  fetch: typeof fetch;
  /** Default deadline of one call. */
  timeoutMs: number;
  /** Retry tunables. */
  retry: RetryPolicy;
  /** Receives retry notices; never secrets. */
  log: (line: string) => void;
  /** Where the settings came from, for the messages of a refused key or an unreachable service. */
  setup?: ServiceSetup | undefined;
}

/** What is sent to openapi-fetch for one attempt. */
export interface AttemptInit {
  signal: AbortSignal;
  headers: Record<string, string>;
}

/** What openapi-fetch answers. */
export interface RawResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** Describes one call. */
export interface CallSpec<S extends z.ZodType | undefined> {
  /** e.g. `sandboxes.get`; whether it may be retried comes from `OPERATIONS` (operations.ts). */
  operation: OperationName;
  /** The sandbox, template or build the call is about. */
  resourceId?: string | undefined;
  /** Statuses that mean success, exactly as the contract says. */
  success: readonly number[];
  /** Validates the success body; undefined when the success has no body. */
  schema: S;
  /**
   * How to fix a failure with a given code, where the call knows better than the usual advice.
   * @default the usual advice of each code
   */
  hints?: Partial<Record<ErrorCode, string>> | undefined;
}

/**
 * The {@link CallSpec} of a call: `operation` succeeds with one of `success`
 * and its body is validated by `schema` (undefined: no body).
 * @param resourceId - the ID the call is about @default none
 */
export function callSpec<S extends z.ZodType | undefined>(
  operation: OperationName,
  success: readonly number[],
  schema: S,
  resourceId?: string,
): CallSpec<S> {
  return { operation, resourceId, success, schema };
}

/** The validated result of a call. */
export interface CallResult<T> {
  data: T;
  response: Response;
}

/**
 * Releases the body of an answer the caller does not read (a 202 or a v1
 * update). openapi-fetch has already read the body of an error answer, which
 * leaves its stream locked: cancelling it then would throw ("ReadableStream is
 * locked") and hide the service's status and message, so only a body nobody
 * has touched is cancelled.
 */
export async function discardBody(response: Response): Promise<void> {
  if (response.bodyUsed || response.body === null || response.body.locked) return;
  await response.body.cancel();
}

/** Fields of control-API answers that hold credentials (sandbox and volume access tokens). */
const TOKEN_FIELD = /(?:AccessToken|^token)$/;

/**
 * Registers the credentials an answer carries (`envdAccessToken`,
 * `trafficAccessToken`, a volume's `token`), so that they are redacted by
 * value wherever they might be echoed later.
 */
function registerTokens(data: unknown): void {
  if (data === null || typeof data !== "object") return;
  if (Array.isArray(data)) {
    data.forEach(registerTokens);
    return;
  }
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === "string" && TOKEN_FIELD.test(key)) registerSecret(value);
    else if (typeof value === "object") registerTokens(value);
  }
}

/**
 * Runs `send` under the call's deadline and retry policy, maps failures to
 * {@link SandboxIacError} and validates the success body with `spec.schema`.
 */
export async function invoke<S extends z.ZodType | undefined>(
  ctx: CallContext,
  spec: CallSpec<S>,
  options: CallOptions | undefined,
  send: (init: AttemptInit) => Promise<RawResult>,
): Promise<CallResult<S extends z.ZodType ? z.output<S> : undefined>> {
  const call = { operation: spec.operation, resourceId: spec.resourceId };
  const timeoutMs = options?.timeoutMs ?? ctx.timeoutMs;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options?.signal ? AbortSignal.any([options.signal, deadline]) : deadline;

  let result: RawResult;
  try {
    result = await withRetries(
      () => send({ signal, headers: options?.headers ?? {} }),
      (outcome: AttemptOutcome<RawResult>) =>
        outcome.ok ? classifyResponse(outcome.value.response) : classifyError(outcome.error),
      {
        ...ctx.retry,
        idempotent: isIdempotent(spec.operation),
        signal,
        onRetry: (n) =>
          ctx.log(
            redact(
              `sandbox-iac: ${spec.operation}${spec.resourceId ? ` (${spec.resourceId})` : ""} got ${n.reason}; retry ${n.attempt}/${n.maxAttempts - 1} in ${n.delayMs} ms`,
            ),
          ),
      },
    );
  } catch (error) {
    throw errorFromFailure(
      call,
      error,
      {
        canceled: options?.signal?.aborted === true,
        timedOutAfterMs: deadline.aborted ? timeoutMs : undefined,
      },
      ctx.setup,
    );
  }

  const { response } = result;
  if (!spec.success.includes(response.status)) {
    if (response.ok) {
      throw new SandboxIacError(
        "contract_violation",
        `the service answered HTTP ${response.status}, the contract requires ${spec.success.join(" or ")}`,
        { ...call, status: response.status },
      );
    }
    throw errorFromResponse(call, response.status, result.error, spec.hints, ctx.setup);
  }
  const data =
    spec.schema === undefined
      ? undefined
      : parseResponse(spec.schema, result.data, { ...call, status: response.status });
  registerTokens(data);
  return { data: data as S extends z.ZodType ? z.output<S> : undefined, response };
}
