/**
 * The concurrent-sandbox limit of the service's team (its API key): how many
 * of its sandboxes may run at once, creates and resumes in flight included.
 * Past it, create, resume and connect answer E2B's 429 with E2B's message.
 *
 * @module
 */
import { serviceError } from "../http";

/** E2B's message for a team at its concurrent-sandbox limit (its API's `ClientMsg`). */
function concurrencyLimitMessage(limit: number): string {
  return `you have reached the maximum number of concurrent E2B sandboxes (${limit}). If you need more, please visit 'https://e2b.dev/docs/billing'`;
}

/** Admits sandbox starts while fewer than `limit` run or are starting. */
export class ConcurrencyLimit {
  private inFlight = 0;

  /**
   * @param limit - most sandboxes running at once
   * @param running - how many run now (not counting starts admitted here and not yet done)
   */
  constructor(
    readonly limit: number,
    private readonly running: () => number,
  ) {}

  /**
   * Reserves one place for a start and returns its release, to call once the
   * start is done (it then counts among `running`) or failed.
   * @throws SandboxIacError `rate_limited` (429) with E2B's message at the limit
   */
  admit(): () => void {
    if (this.running() + this.inFlight >= this.limit)
      throw serviceError("rate_limited", concurrencyLimitMessage(this.limit));
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }
}
