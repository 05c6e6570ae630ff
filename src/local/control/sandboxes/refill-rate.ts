/**
 * How many warm-pool members to start at once: the creates' rate over the
 * last few claims times how long a member takes to be ready (Little's law),
 * between the pool's `concurrency` and `maxConcurrency`.
 *
 * @module
 */

/** Claims the creates' rate is measured over. */
const RATE_WINDOW = 8;

/** The bounds and clock {@link RefillRate} works with. */
export interface RefillRateOptions {
  /** Starts at once while creates come slower than the pool refills. */
  concurrency: number;
  /** The most starts at once under demand. */
  maxConcurrency: number;
  /** Claims older than this no longer count as demand, ms. */
  idleMs: number;
  /** The clock, ms. */
  now: () => number;
}

/** The creates' rate and the members' time to ready, and the starts at once they call for. */
export class RefillRate {
  /** When the last few claims came (every key). */
  private readonly claimTimes: number[] = [];
  /** A moving average of how long a member takes to be ready (start and warm-up), ms. */
  private readyMs: number | undefined;

  constructor(private readonly opts: RefillRateOptions) {}

  /** A create claimed (or tried to). */
  noteClaim(): void {
    this.claimTimes.push(this.opts.now());
    if (this.claimTimes.length > RATE_WINDOW) this.claimTimes.shift();
  }

  /** A member became ready `ms` after its start began. */
  noteReady(ms: number): void {
    this.readyMs = this.readyMs === undefined ? ms : this.readyMs * 0.7 + ms * 0.3;
  }

  /**
   * Members to start at once now: as many as creates arrive while one member
   * starts (creates per ms times a member's ms to ready), at least
   * `concurrency` and at most `maxConcurrency`. A start is mostly CPU, so
   * past the cores more at once only share them, but under a burst the
   * pool's starts then keep their share against the creates' own work.
   */
  startsAtOnce(): number {
    const { concurrency, maxConcurrency, idleMs, now } = this.opts;
    const times = this.claimTimes;
    const last = times[times.length - 1];
    if (
      times.length < 2 ||
      this.readyMs === undefined ||
      last === undefined ||
      now() - last > idleMs
    )
      return concurrency;
    const perMs = (times.length - 1) / Math.max(1, last - (times[0] ?? last));
    const needed = Math.ceil(perMs * this.readyMs);
    return Math.min(maxConcurrency, Math.max(concurrency, needed));
  }
}
