/**
 * Which sandboxes are in the runtime's background (`SandboxRuntime.setBackground`),
 * and the starts of such sandboxes waiting to go on.
 *
 * Why starts wait: the warm pool puts its members in the background from a
 * claim until the claimed sandbox's first exchange ended
 * (`control/sandboxes/member-priority.ts`). Their cgroups' `cpu.idle` covers
 * what runs inside them, but a start's host work does not run there: `mkfs.ext4`,
 * the holder, `ip`, `nft`, the mount helper and the launch run from the
 * service, and the service's own event loop drives them. Run beside a claimed
 * sandbox's create and first command, a member's start cost that command
 * about 3 ms in bench:local's loop of creates (docs/benchmarks.md, "The warm
 * pool under a tight loop of creates"). So a start in the background waits,
 * between its host phases, until it is back in the foreground. Nothing is
 * made to wait while it holds anything: a host command at a lower priority
 * instead could be preempted while holding the kernel's rtnl or nftables
 * locks, which every other start needs.
 *
 * @module
 */

/**
 * The longest a start waits at one of its phases, ms. A claim's window ends
 * with its first exchange or the pool's refill delay (40 ms by default), so
 * this is only a bound for an id left in the background: such a start is
 * slowed, never held.
 */
const FOREGROUND_WAIT_MAX_MS = 100;

/** The sandboxes in the background, by id, and the starts waiting for each to come back. */
export class BackgroundSet {
  private readonly ids = new Set<string>();
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Whether `id` is in the background now. */
  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Moves `id` into the background or out of it; out of it, its waiting starts go on. */
  set(id: string, background: boolean): void {
    if (background) {
      this.ids.add(id);
      return;
    }
    this.ids.delete(id);
    this.wake(id);
  }

  /**
   * Resolves once `id` is not in the background, or after `maxMs` at most;
   * with the ms waited (0 when it was not in the background).
   */
  whenForeground(id: string, maxMs: number = FOREGROUND_WAIT_MAX_MS): Promise<number> {
    if (!this.ids.has(id)) return Promise.resolve(0);
    const t0 = performance.now();
    return new Promise((resolve) => {
      const waiters = this.waiting.get(id) ?? new Set<() => void>();
      this.waiting.set(id, waiters);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiting.get(id) === waiters) this.waiting.delete(id);
        resolve(performance.now() - t0);
      };
      const timer = setTimeout(done, maxMs);
      // A start waiting here must not keep a closing process alive on its own.
      timer.unref();
      waiters.add(done);
    });
  }

  /** Lets every waiting start go on (the runtime closes). */
  releaseAll(): void {
    for (const id of [...this.waiting.keys()]) this.wake(id);
  }

  private wake(id: string): void {
    const waiters = this.waiting.get(id);
    if (!waiters) return;
    this.waiting.delete(id);
    for (const done of [...waiters]) done();
  }
}
