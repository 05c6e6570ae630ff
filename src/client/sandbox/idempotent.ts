/**
 * Retries for idempotent reads (stat, list, read, metrics): transient
 * failures only, through the shared {@link withRetries}. Start, upload and
 * every other call with side effects are never retried: a lost answer does not
 * mean the work was not done.
 *
 * @module
 */
import { SandboxIacError } from "../../errors";
import { withRetries, type RetryDecision } from "../retry";

/** Codes (already mapped by `errors.ts`) that say "try again", not "no". */
function classify(outcome: { ok: boolean; error?: unknown }): RetryDecision {
  if (outcome.ok) return { retry: false };
  const err = outcome.error;
  if (SandboxIacError.hasCode(err, "unavailable") || SandboxIacError.hasCode(err, "rate_limited")) {
    return { retry: true, reason: `${err.code}${err.status ? ` (HTTP ${err.status})` : ""}` };
  }
  return { retry: false };
}

/** Runs an idempotent call, retrying transient failures with jittered backoff. */
export function retryIdempotent<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  return withRetries(() => fn(), classify, { idempotent: true, signal });
}
