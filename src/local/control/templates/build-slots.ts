/**
 * The bound on builds that run at once: a build takes a slot before it
 * prepares its base and gives it back when it ends; the others wait in order.
 *
 * @module
 */

/** At most `max` holders at once; the rest wait first come, first served. */
export class BuildSlots {
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly max: number) {}

  /**
   * Resolves `true` once the caller holds a slot, or `false` as soon as
   * `cancelled` fires while it waits for one (it then ends without running
   * and must not call {@link release}).
   */
  whenFree(cancelled: AbortSignal): Promise<boolean> {
    if (cancelled.aborted) return Promise.resolve(false);
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const take = () => {
        cancelled.removeEventListener("abort", giveUp);
        resolve(true);
      };
      const giveUp = () => {
        this.queue.splice(this.queue.indexOf(take), 1);
        resolve(false);
      };
      this.queue.push(take);
      cancelled.addEventListener("abort", giveUp, { once: true });
    });
  }

  /** Gives a held slot back: to the next waiter, if any. */
  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.running--;
  }
}
