/**
 * The warm pool: runtime sandboxes started ahead of time (namespaces, overlay,
 * cgroup, the agent up and healthy) so that create does not pay for a Node
 * start on its critical path (docs/benchmarks.md#baselines: about 120 ms).
 *
 * Design. A member is started with a freshly generated sandbox id; that id is
 * baked in at bwrap start (hostname, `HOSTNAME`) and becomes the sandbox's id
 * when a create claims it, so nothing is renamed. Members are keyed by
 * everything fixed at start (layers, CPU count, memory limit, network), so a
 * claimed member already has the limits its sandbox asks for. What differs per
 * sandbox (environment, access token, default user and workdir) is applied by
 * the agent's `/init`: sent during the warm-up as the key's last create sent
 * it, and again at the claim when the create's differs (pre-init.ts).
 *
 * Members are invisible: the manager only learns of one when it claims it, so
 * they never show in list, metrics or the state file. They are throwaway: a
 * stop or a crash destroys their writable layer, and a service killed with
 * `kill -9` leaves directories the manager removes on its next start (ids
 * absent from the state file).
 *
 * Demand. Each key keeps `size` members ready while it is quiet. A create
 * that finds its key empty (a miss: demand outran the refill) doubles the
 * key's target, up to `maxSize`; a key not claimed for `idleMs` falls back to
 * `size` and stops its extra members. Members start in parallel: as many at
 * once as creates arrive during one member's start (the creates' rate over
 * the last few claims times a member's time to ready), at least
 * `concurrency` (by default one per core: a start is mostly CPU, the agent's
 * Node start) and at most `maxConcurrency` (by default the same: on 2 cores,
 * four starts at once stretched every cold start to 2.7-4.1x of one Node
 * start against 1.3-1.4x with two, for a create p95 only a little better;
 * docs/benchmarks.md, "The warm pool under a tight loop of creates"). A create that finds no
 * ready member ({@link WarmPool.claimSoon}) takes one whose warm-up is under
 * way, else waits for a start of its key under way (and its warm-up), rather
 * than beginning a cold start of its own: either is nearer than a new start.
 * The refill after a claim that handed a member over starts once a claimed
 * sandbox's first exchange through the proxy ended (its create's first
 * command, usually), or `refillDelayMs` after the claim when none came;
 * until then the members already starting or ready step aside for it
 * (member-priority.ts).
 *
 * Bounds: at most `maxSize` members per key, at most `maxKeys` keys (the least
 * recently used key is dropped), `maxConcurrency` starts at a time, and the
 * pool's share of memory: its members (ready and starting, over every key)
 * together have memory limits of at most `memoryShareMB`, by default a
 * quarter of the memory every sandbox shares (`--max-sandboxes`' budget:
 * the host's memory minus an eighth). A start past it waits until a claim
 * or a shrink makes room.
 *
 * Where each part lives: the claims in warm-pool-claim.ts, a member's start,
 * warm-up and ready (and the refill) in warm-pool-start.ts, the keys' use
 * and the shrinking and discarding in warm-pool-trim.ts, the members and
 * slots in warm-pool-state.ts; this class holds their state and answers the
 * manager.
 *
 * @module
 */
import type { RuntimeSandbox } from "../../runtime/types";
import { MemberPriority } from "./member-priority";
import { RefillRate } from "./refill-rate";
import { claim, claimedExchanged, claimSoon } from "./warm-pool-claim";
import { resolveWarmPoolOptions, type WarmPoolOptions, type WarmSpec } from "./warm-pool-options";
import { refill } from "./warm-pool-start";
import { alive, releaseWaiters, type Member, type PoolState } from "./warm-pool-state";
import { discard, touch } from "./warm-pool-trim";

export type { WarmSpec } from "./warm-pool-options";
export { warmKey } from "./warm-pool-state";

/** Pre-started sandboxes, claimed by create. */
export class WarmPool {
  /** Its slots, members, starts and timers (warm-pool-state.ts). */
  private readonly pool: PoolState;

  constructor(opts: WarmPoolOptions) {
    const limits = resolveWarmPoolOptions(opts);
    this.pool = {
      opts,
      limits,
      rate: new RefillRate(limits),
      slots: new Map(),
      starts: new Set(),
      discarding: new Set(),
      priority: new MemberPriority(opts.runtime.setBackground?.bind(opts.runtime)),
      shrinkTimer: undefined,
      refillTimer: undefined,
      closed: false,
    };
  }

  /**
   * Takes a ready member for `spec`, or `undefined` when none is ready (the
   * caller starts one itself, and the key's target grows). Either way the key
   * becomes the most recently used one and its refill is scheduled.
   */
  claim(spec: WarmSpec): RuntimeSandbox | undefined {
    return claim(this.pool, spec);
  }

  /**
   * Like {@link claim}, but when no member is ready and one of the key's
   * starts is in flight (and not promised to an earlier create), waits for
   * that start: a create then pays what is left of a start already under
   * way, never a whole cold start more. Resolves `undefined` when nothing is
   * starting for it or that start fails (the caller starts one itself).
   */
  async claimSoon(spec: WarmSpec): Promise<RuntimeSandbox | undefined> {
    return claimSoon(this.pool, spec);
  }

  /**
   * A claimed sandbox's first proxied exchange (its create's first command,
   * usually) ended: the refill waiting for it starts now rather than at the
   * end of `refillDelayMs`.
   */
  claimedExchanged(): void {
    claimedExchanged(this.pool);
  }

  /** Keeps `spec` warm without claiming (e.g. the `base` template at start). */
  prime(spec: WarmSpec): void {
    if (this.pool.closed || this.pool.limits.size === 0) return;
    touch(this.pool, spec);
    refill(this.pool);
  }

  /**
   * Forgets every key whose layers include `layerId` (its template or
   * snapshot was deleted) and stops their members, so the layer can go and
   * no refill ever starts on it again.
   */
  async forgetLayer(layerId: string): Promise<void> {
    const dropped: Member[] = [];
    for (const [key, slot] of this.pool.slots) {
      if (!slot.spec.layers.includes(layerId)) continue;
      this.pool.slots.delete(key);
      releaseWaiters(slot);
      dropped.push(...slot.ready);
    }
    // A member being started on the layer is discarded when its start ends,
    // as its key is gone; waiting for it keeps the layer unmounted.
    await Promise.all([...this.pool.starts]);
    for (const member of dropped) await discard(this.pool, member);
  }

  /** Ready members, over every key (for tests and logs). */
  get readyCount(): number {
    let n = 0;
    for (const slot of this.pool.slots.values()) n += alive(slot);
    return n;
  }

  /** Ids of the ready members (they are no sandbox of the API yet). */
  readyIds(): string[] {
    return [...this.pool.slots.values()].flatMap((s) =>
      s.ready.filter((member) => !member.dead).map((member) => member.processes.sandboxID),
    );
  }

  /** Stops the refill, then stops and destroys every member. */
  async close(): Promise<void> {
    const pool = this.pool;
    pool.closed = true;
    if (pool.shrinkTimer) clearTimeout(pool.shrinkTimer);
    if (pool.refillTimer) clearTimeout(pool.refillTimer);
    pool.priority.resume();
    for (const slot of pool.slots.values()) releaseWaiters(slot);
    await Promise.all([...pool.starts]);
    await Promise.all([...pool.discarding]);
    const members = [...pool.slots.values()].flatMap((s) => s.ready);
    pool.slots.clear();
    // Sequential: bounded by maxSize x maxKeys, and each stop is a handful of cgroup writes.
    for (const member of members) await discard(pool, member);
  }
}
