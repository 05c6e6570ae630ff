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
 * @module
 */
import type { RuntimeSandbox } from "../../runtime/types";
import { MemberPriority } from "./member-priority";
import { RefillRate } from "./refill-rate";
import {
  resolveWarmPoolOptions,
  type ResolvedWarmPoolOptions,
  type WarmPoolOptions,
  type WarmSpec,
} from "./warm-pool-options";

export type { WarmSpec } from "./warm-pool-options";

interface Member {
  processes: RuntimeSandbox;
  /** Set when its processes exited while waiting in the pool. */
  dead: boolean;
  /** When it became ready (the pool's clock), for the claim's log line; NaN before. */
  readyAt: number;
  /** Set once a create took it (possibly before its warm-up ended). */
  claimed: boolean;
}

interface Slot {
  spec: WarmSpec;
  ready: Member[];
  /** Members of this key being started (warming up included). */
  starting: number;
  /** Started members whose warm-up is under way: a create with none ready takes one of these first. */
  warming: Member[];
  /** Members wanted now: `size`, doubled on each miss up to `maxSize`. */
  target: number;
  /** When a create last claimed from this key (ms since the epoch). */
  lastClaim: number;
  /** Set after a failed start: no refill until the next claim asks again. */
  failed: boolean;
  /** Creates waiting for a start in flight, first come first served; each gets one member (or none). */
  waiters: Array<(member: Member | undefined) => void>;
}

/** The pool key of a spec: everything fixed when a sandbox starts. */
export function warmKey(spec: WarmSpec): string {
  return JSON.stringify([spec.layers, spec.cpuCount, spec.memoryMB, spec.allowInternetAccess]);
}

function alive(slot: Slot): number {
  return slot.ready.filter((member) => !member.dead).length;
}

/** Pre-started sandboxes, claimed by create. */
export class WarmPool {
  /** Its options with every default applied and every bound enforced. */
  private readonly limits: ResolvedWarmPoolOptions;
  /** How many members start at once, from the creates' rate. */
  private readonly rate: RefillRate;
  /** Insertion order is recency: a claim moves its key to the end. */
  private readonly slots = new Map<string, Slot>();
  /** Members being started; close() and forgetLayer() wait for them. */
  private readonly starts = new Set<Promise<void>>();
  /** Members of dropped keys being stopped; close() waits for them. */
  private readonly discarding = new Set<Promise<void>>();
  private shrinkTimer: NodeJS.Timeout | undefined;
  /** The refill after a claim, while it waits ({@link refillAfterClaim}). */
  private refillTimer: NodeJS.Timeout | undefined;
  /** Members step aside from a claim until its first exchange (member-priority.ts). */
  private readonly priority: MemberPriority;
  private closed = false;

  constructor(private readonly opts: WarmPoolOptions) {
    this.limits = resolveWarmPoolOptions(opts);
    this.priority = new MemberPriority(opts.runtime.setBackground?.bind(opts.runtime));
    this.rate = new RefillRate(this.limits);
  }

  /**
   * Takes a ready member for `spec`, or `undefined` when none is ready (the
   * caller starts one itself, and the key's target grows). Either way the key
   * becomes the most recently used one and its refill is scheduled.
   */
  claim(spec: WarmSpec): RuntimeSandbox | undefined {
    const taken = this.take(spec);
    if (taken?.member) this.refillAfterClaim();
    else this.refill();
    if (taken) this.logClaim(taken.slot, taken.member, undefined);
    return taken?.member?.processes;
  }

  /**
   * Like {@link claim}, but when no member is ready and one of the key's
   * starts is in flight (and not promised to an earlier create), waits for
   * that start: a create then pays what is left of a start already under
   * way, never a whole cold start more. Resolves `undefined` when nothing is
   * starting for it or that start fails (the caller starts one itself).
   */
  async claimSoon(spec: WarmSpec): Promise<RuntimeSandbox | undefined> {
    const taken = this.take(spec);
    if (!taken || taken.member) {
      if (taken?.member) this.refillAfterClaim();
      else this.refill();
      if (taken) this.logClaim(taken.slot, taken.member, undefined);
      return taken?.member?.processes;
    }
    const { slot } = taken;
    // A member warming up is nearer than any start: its create's /init and
    // first command wait only for what is left of the agent's load.
    const warming = slot.warming.find((member) => !member.claimed && !member.dead);
    if (warming) {
      warming.claimed = true;
      this.priority.release(warming.processes.sandboxID);
      this.refillAfterClaim();
      this.opts.log(
        `warm pool: claimed ${warming.processes.sandboxID} warming up (${alive(slot)} ready, ${slot.starting} starting, target ${slot.target})`,
      );
      return warming.processes;
    }
    // Members claimed while warming up still count as starting; no waiter gets them.
    const open = slot.starting - slot.warming.filter((member) => member.claimed).length;
    const waiting =
      open > slot.waiters.length
        ? new Promise<Member | undefined>((resolve) => slot.waiters.push(resolve))
        : undefined;
    this.refill();
    if (!waiting) {
      this.logClaim(slot, undefined, undefined);
      return undefined;
    }
    const t0 = this.limits.now();
    const member = await waiting;
    this.logClaim(slot, member, this.limits.now() - t0);
    return member?.processes;
  }

  /**
   * One line per claim, so a create's latency can be told apart in the
   * service log (bench/local.js reads them): a ready member and how long it
   * waited, a start waited for, or none (the create starts its own).
   */
  private logClaim(slot: Slot, member: Member | undefined, waitedMs: number | undefined): void {
    const counts = `${alive(slot)} ready, ${slot.starting} starting, target ${slot.target}`;
    if (!member) {
      this.opts.log(`warm pool: claim missed, the create starts cold (${counts})`);
    } else if (waitedMs === undefined) {
      const age = this.limits.now() - member.readyAt;
      this.opts.log(
        `warm pool: claimed ${member.processes.sandboxID} ready (age ${age.toFixed(0)} ms; ${counts})`,
      );
    } else {
      this.opts.log(
        `warm pool: claimed ${member.processes.sandboxID} after waiting ${waitedMs.toFixed(0)} ms for its start (${counts})`,
      );
    }
  }

  /**
   * The refill after a claim that handed a member over: once a claimed
   * sandbox's first exchange ended ({@link claimedExchanged}), at the latest
   * `refillDelayMs` later (one timer for claims in a row, so a steady stream
   * of creates never keeps postponing it), so that the create's answer and
   * its first command do not share the cores with a start's burst (the
   * service's mounts and spawn, the agent's Node start).
   */
  private refillAfterClaim(): void {
    if (this.limits.refillDelayMs === 0) return this.refill();
    if (this.refillTimer || this.closed) return;
    this.priority.stepAside();
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.priority.resume();
      this.refill();
    }, this.limits.refillDelayMs);
  }

  /**
   * A claimed sandbox's first proxied exchange (its create's first command,
   * usually) ended: the refill waiting for it ({@link refillAfterClaim})
   * starts now rather than at the end of `refillDelayMs`.
   */
  claimedExchanged(): void {
    if (!this.refillTimer) return;
    clearTimeout(this.refillTimer);
    this.refillTimer = undefined;
    this.priority.resume();
    this.refill();
  }

  /** Takes a ready member of `spec`'s key (growing the key on a miss); undefined when the pool is off. */
  private take(spec: WarmSpec): { slot: Slot; member: Member | undefined } | undefined {
    if (this.closed || this.limits.size === 0) return undefined;
    const known = this.slots.has(warmKey(spec));
    const slot = this.touch(spec);
    slot.failed = false;
    slot.lastClaim = Date.now();
    this.rate.noteClaim();
    let member: Member | undefined;
    while ((member = slot.ready.shift()) && member.dead);
    if (member) {
      member.claimed = true;
      this.priority.release(member.processes.sandboxID);
    }
    // A miss on a key already kept warm means creates outran its refill; a
    // first create of a template is no such sign.
    if (!member && known && slot.target < this.limits.maxSize) {
      slot.target = Math.min(this.limits.maxSize, slot.target * 2);
      this.opts.log(`warm pool: no ready sandbox for a create; keeping ${slot.target} ready`);
    }
    return { slot, member };
  }

  /** Keeps `spec` warm without claiming (e.g. the `base` template at start). */
  prime(spec: WarmSpec): void {
    if (this.closed || this.limits.size === 0) return;
    this.touch(spec);
    this.refill();
  }

  /**
   * Forgets every key whose layers include `layerId` (its template or
   * snapshot was deleted) and stops their members, so the layer can go and
   * no refill ever starts on it again.
   */
  async forgetLayer(layerId: string): Promise<void> {
    const dropped: Member[] = [];
    for (const [key, slot] of this.slots) {
      if (!slot.spec.layers.includes(layerId)) continue;
      this.slots.delete(key);
      releaseWaiters(slot);
      dropped.push(...slot.ready);
    }
    // A member being started on the layer is discarded when its start ends,
    // as its key is gone; waiting for it keeps the layer unmounted.
    await Promise.all([...this.starts]);
    for (const member of dropped) await this.discard(member);
  }

  /** Ready members, over every key (for tests and logs). */
  get readyCount(): number {
    let n = 0;
    for (const slot of this.slots.values()) n += alive(slot);
    return n;
  }

  /** Ids of the ready members (they are no sandbox of the API yet). */
  readyIds(): string[] {
    return [...this.slots.values()].flatMap((s) =>
      s.ready.filter((member) => !member.dead).map((member) => member.processes.sandboxID),
    );
  }

  /** Stops the refill, then stops and destroys every member. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.shrinkTimer) clearTimeout(this.shrinkTimer);
    if (this.refillTimer) clearTimeout(this.refillTimer);
    this.priority.resume();
    for (const slot of this.slots.values()) releaseWaiters(slot);
    await Promise.all([...this.starts]);
    await Promise.all([...this.discarding]);
    const members = [...this.slots.values()].flatMap((s) => s.ready);
    this.slots.clear();
    // Sequential: bounded by maxSize x maxKeys, and each stop is a handful of cgroup writes.
    for (const member of members) await this.discard(member);
  }

  private touch(spec: WarmSpec): Slot {
    const key = warmKey(spec);
    let slot = this.slots.get(key);
    if (slot) this.slots.delete(key);
    else
      slot = {
        spec: { ...spec, layers: [...spec.layers] },
        ready: [],
        starting: 0,
        warming: [],
        target: this.limits.size,
        lastClaim: Date.now(),
        failed: false,
        waiters: [],
      };
    this.slots.set(key, slot);
    while (this.slots.size > this.limits.maxKeys) {
      const [oldKey, old] = this.slots.entries().next().value as [string, Slot];
      this.slots.delete(oldKey);
      releaseWaiters(old);
      for (const member of old.ready) this.discardLater(member);
    }
    return slot;
  }

  /**
   * Starts members, most recently used key first, until every key has its
   * target, `concurrency` are starting, or one more would pass the pool's
   * share of memory.
   */
  private refill(): void {
    const concurrency = this.rate.startsAtOnce();
    while (!this.closed && this.starts.size < concurrency) {
      const held = this.heldMemoryMB();
      const slot = [...this.slots.values()]
        .reverse()
        .find(
          (s) =>
            !s.failed &&
            alive(s) + s.starting < s.target &&
            held + s.spec.memoryMB <= this.limits.memoryShareMB,
        );
      if (!slot) break;
      slot.starting++;
      const p = this.startOne(slot).finally(() => {
        slot.starting--;
        this.starts.delete(p);
        this.refill();
      });
      this.starts.add(p);
    }
    this.scheduleShrink();
  }

  /** The memory limits of every member, ready or starting, in MiB. */
  private heldMemoryMB(): number {
    let mb = 0;
    for (const slot of this.slots.values())
      mb += (alive(slot) + slot.starting) * slot.spec.memoryMB;
    return mb;
  }

  private async startOne(slot: Slot): Promise<void> {
    const id = this.opts.newId();
    this.priority.add(id);
    const t0 = this.limits.now();
    let processes: RuntimeSandbox;
    try {
      processes = await this.opts.runtime.start({ ...slot.spec, sandboxID: id });
    } catch (err) {
      await this.startFailed(slot, id, undefined, err);
      return;
    }
    const startMs = this.limits.now() - t0;
    const member: Member = { processes, dead: false, readyAt: NaN, claimed: false };
    void processes.exited.then(() => {
      if (member.dead) return;
      member.dead = true;
      // Still waiting in the pool: nobody else will clean it up (a member
      // warming up is cleaned up by its failed warm-up).
      const idx = slot.ready.indexOf(member);
      if (idx >= 0) {
        slot.ready.splice(idx, 1);
        this.priority.release(processes.sandboxID);
        void this.opts.runtime.destroy(processes.sandboxID).catch(() => undefined);
      }
    });
    if (this.closed || this.slots.get(warmKey(slot.spec)) !== slot) {
      await this.discard(member);
      return;
    }
    // A create already waiting gets it once warmed up, like any other: handed over at its
    // agent's answer, its first command paid the agent's load and more (bench:local, load 14-19).
    slot.warming.push(member);
    try {
      await this.opts.warmUp?.(processes, slot.spec);
    } catch (err) {
      slot.warming.splice(slot.warming.indexOf(member), 1);
      // Claimed while warming up: the create owns it now, and its own first
      // command says what is wrong.
      if (member.claimed) return;
      member.dead = true;
      await this.startFailed(slot, id, processes, err);
      return;
    }
    const readyMs = this.limits.now() - t0;
    this.rate.noteReady(readyMs);
    const idx = slot.warming.indexOf(member);
    if (idx >= 0) slot.warming.splice(idx, 1);
    if (member.claimed) return;
    member.readyAt = this.limits.now();
    this.opts.log(
      `warm pool: ${id} ready in ${readyMs.toFixed(0)} ms (start ${startMs.toFixed(0)}, warm-up ${(readyMs - startMs).toFixed(0)}; ${this.starts.size} starting of at most ${this.rate.startsAtOnce()})`,
    );
    if (this.closed || this.slots.get(warmKey(slot.spec)) !== slot) {
      await this.discard(member);
      return;
    }
    const waiter = slot.waiters.shift();
    if (waiter) {
      member.claimed = true;
      this.priority.release(id);
      waiter(member);
    } else slot.ready.push(member);
  }

  /** A start or warm-up failed: the key stops refilling until claimed again, and a waiting create starts its own. */
  private async startFailed(
    slot: Slot,
    id: string,
    processes: RuntimeSandbox | undefined,
    err: unknown,
  ): Promise<void> {
    this.priority.release(id);
    await processes?.stop().catch(() => undefined);
    slot.failed = true;
    this.opts.log(
      `warm pool: starting a sandbox for layers ${slot.spec.layers.join(",")} failed: ${String(err)}`,
    );
    await this.opts.runtime.destroy(id).catch(() => undefined);
    slot.waiters.shift()?.(undefined);
  }

  /** Arms one timer that shrinks keys grown beyond `size` once they are quiet. */
  private scheduleShrink(): void {
    if (this.shrinkTimer || this.closed) return;
    if (![...this.slots.values()].some((s) => s.target > this.limits.size)) return;
    this.shrinkTimer = setTimeout(() => {
      this.shrinkTimer = undefined;
      this.shrinkIdle();
    }, this.limits.idleMs);
    this.shrinkTimer.unref();
  }

  private shrinkIdle(): void {
    const now = Date.now();
    for (const slot of this.slots.values()) {
      if (slot.target <= this.limits.size || now - slot.lastClaim < this.limits.idleMs) continue;
      slot.target = this.limits.size;
      // The oldest members go first: the newest have the warmest caches.
      const extra = slot.ready.length - slot.target;
      if (extra > 0) for (const member of slot.ready.splice(0, extra)) this.discardLater(member);
    }
    this.scheduleShrink();
  }

  private discardLater(member: Member): void {
    const p = this.discard(member).finally(() => this.discarding.delete(p));
    this.discarding.add(p);
  }

  private async discard(member: Member): Promise<void> {
    member.dead = true;
    this.priority.release(member.processes.sandboxID);
    try {
      await member.processes.stop();
      await this.opts.runtime.destroy(member.processes.sandboxID);
    } catch (err) {
      this.opts.log(
        `warm pool: discarding sandbox ${member.processes.sandboxID} failed: ${String(err)}`,
      );
    }
  }
}

/** Answers every create waiting on `slot`'s starts with no member: each starts its own. */
function releaseWaiters(slot: Slot): void {
  for (const resolve of slot.waiters.splice(0)) resolve(undefined);
}
