/**
 * Retries with jittered exponential backoff, shared by the control client and
 * the sandbox client.
 *
 * Only idempotent calls may be retried: the caller says so. Retried: HTTP 429
 * (honouring `Retry-After`), 502, 503, 504 and connection failures
 * (ECONNREFUSED, ECONNRESET, a fetch `TypeError`). Attempts are bounded and the
 * wait between them stops as soon as the caller's signal aborts.
 *
 * @module
 */

import { CONTROL_HEADERS } from "../wire/control";

/** HTTP statuses worth another attempt of an idempotent call. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Error codes of Node sockets that mean "the connection failed", not "the request was wrong". */
const CONNECTION_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Tunables of {@link withRetries}. */
export interface RetryPolicy {
  /**
   * Attempts after the first one.
   * @default 3
   */
  retries?: number | undefined;
  /**
   * Backoff before the first retry; doubled each time, then jittered.
   * @default 250 ms
   */
  baseDelayMs?: number | undefined;
  /**
   * Upper bound of one wait, including a server's `Retry-After`.
   * @default 30 000 ms
   */
  maxDelayMs?: number | undefined;
  /**
   * Source of randomness for the jitter, in [0, 1).
   * @default `Math.random`
   */
  random?: (() => number) | undefined;
}

/** What to do after one attempt. */
export type RetryDecision =
  | { retry: false }
  | {
      retry: true;
      /** Why, for the log line (e.g. `HTTP 503`). */
      reason: string;
      /** A wait the server asked for (from `Retry-After`), in ms. */
      delayMs?: number | undefined;
    };

/** Told before each retry. */
interface RetryNotice {
  /** The attempt that just failed, 1-based. */
  attempt: number;
  /** Total attempts allowed. */
  maxAttempts: number;
  /** The wait before the next attempt, in ms. */
  delayMs: number;
  reason: string;
}

/** Options of {@link withRetries}. */
export interface RetryOptions extends RetryPolicy {
  /** When false the call runs once: never retry what is not idempotent. */
  idempotent: boolean;
  /**
   * Stops the waiting between attempts.
   * @default none
   */
  signal?: AbortSignal | undefined;
  /**
   * Called before each retry, e.g. to log it.
   * @default none
   */
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

/** The result of one attempt, as seen by a classifier. */
export type AttemptOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `attempt` until `classify` says stop, the attempts run out or the signal
 * aborts; returns the last value or throws the last error.
 *
 * A value that the classifier wants retried but that is the last attempt is
 * returned as is, so the caller maps it to an error as usual.
 */
export async function withRetries<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  classify: (outcome: AttemptOutcome<T>) => RetryDecision,
  options: RetryOptions,
): Promise<T> {
  const retries = options.idempotent ? Math.max(0, options.retries ?? 3) : 0;
  const maxAttempts = retries + 1;
  for (let n = 1; ; n++) {
    let outcome: AttemptOutcome<T>;
    try {
      outcome = { ok: true, value: await attempt(n) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const decision =
      n < maxAttempts && !options.signal?.aborted ? classify(outcome) : { retry: false as const };
    if (!decision.retry) {
      if (outcome.ok) return outcome.value;
      throw outcome.error;
    }
    const delayMs = retryDelayMs(n, options, decision.delayMs);
    options.onRetry?.({ attempt: n, maxAttempts, delayMs, reason: decision.reason });
    await sleep(delayMs, options.signal);
  }
}

/**
 * The wait before retry number `attempt` (1-based): full jitter over
 * `base * 2^(attempt-1)`, or the server's wait when it gave one, capped by
 * `maxDelayMs`.
 */
export function retryDelayMs(attempt: number, policy: RetryPolicy, serverDelayMs?: number): number {
  const max = policy.maxDelayMs ?? 30_000;
  if (serverDelayMs !== undefined) return Math.min(Math.max(0, serverDelayMs), max);
  const base = policy.baseDelayMs ?? 250;
  const ceiling = Math.min(max, base * 2 ** (attempt - 1));
  return Math.floor((policy.random ?? Math.random)() * ceiling);
}

/** Retries a `Response` with a status in {@link RETRYABLE_STATUSES}, honouring `Retry-After`. */
export function classifyResponse(response: Response): RetryDecision {
  if (!RETRYABLE_STATUSES.has(response.status)) return { retry: false };
  return {
    retry: true,
    reason: `HTTP ${response.status}`,
    delayMs: parseRetryAfter(response.headers.get(CONTROL_HEADERS.retryAfter)),
  };
}

/** Retries connection failures; never an abort, a timeout or any other error. */
export function classifyError(error: unknown): RetryDecision {
  const code = connectionErrorCode(error);
  return code === undefined ? { retry: false } : { retry: true, reason: code };
}

/**
 * The connection-failure code behind `error` (e.g. `ECONNREFUSED`), or
 * undefined when it is not a connection failure. fetch wraps socket errors in
 * a `TypeError("fetch failed")` whose `cause` carries the code.
 */
export function connectionErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && CONNECTION_ERROR_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  if (error instanceof TypeError && error.message === "fetch failed") return "fetch failed";
  return undefined;
}

/**
 * Parses `Retry-After`: delta seconds or an HTTP date. Returns milliseconds,
 * or undefined when absent or unparseable.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Waits `ms`, rejecting with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
}
