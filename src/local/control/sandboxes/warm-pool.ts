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
 * the agent's `/init` after the claim, exactly as for a fresh start.
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
 * `size` and stops its extra members. Up to `concurrency` members start at
 * once (by default one per core: a start is mostly CPU, the agent's Node
 * start, so more at once only share the cores), so a burst of creates is
 * refilled in parallel rather than one start at a time. A create that finds
 * no ready member but one of its key starting ({@link WarmPool.claimSoon})
 * waits for that start rather than beginning a cold start of its own: the
 * member has been starting for a while, so it is ready sooner than a new one.
 *
 * Bounds: at most `maxSize` members per key, at most `maxKeys` keys (the least
 * recently used key is dropped), `concurrency` starts at a time, and the
 * pool's share of memory: its members (ready and starting, over every key)
 * together have memory limits of at most `memoryShareMB`, by default a
 * quarter of the memory every sandbox shares (`--max-sandboxes`' budget:
 * the host's memory minus an eighth). A start past it waits until a claim
 * or a shrink makes room.
 *
 * @module
 */
import { availableParallelism } from "node:os";
import type { RuntimeSandbox, SandboxRuntime, SandboxSpec } from "../../runtime/types";

/** What a pool member is started with: a {@link SandboxSpec} without its id. */
export type WarmSpec = Omit<SandboxSpec, "sandboxID">;

/** Options of {@link WarmPool}. */
export interface WarmPoolOptions {
  runtime: SandboxRuntime;
  /** Generates the id of a new member (the id its sandbox will have). */
  newId: () => string;
  log: (line: string) => void;
  /**
   * Run once on every new member before it is offered, so that the agent's
   * first request (lazily compiled code paths, a cold page cache for the
   * shell) is not paid by a create. A failure discards the member.
   * @default nothing is run
   */
  warmUp?: ((processes: RuntimeSandbox) => Promise<void>) | undefined;
  /**
   * Ready members kept per key while it is quiet; 0 disables the pool.
   * @default 2
   */
  size?: number | undefined;
  /**
   * The most members a key grows to under demand (never below `size`).
   * @default 8
   */
  maxSize?: number | undefined;
  /**
   * Members starting at once, over every key.
   * @default the machine's cores (`os.availableParallelism()`), at least 2
   */
  concurrency?: number | undefined;
  /**
   * The most memory, in MiB, the members together may be limited to (each
   * counts its key's `memoryMB`, ready or starting).
   * @default a quarter of the runtime's `sandboxesMemoryBytes`; no bound when the runtime gives none
   */
  memoryShareMB?: number | undefined;
  /**
   * A key not claimed for this long shrinks back to `size`.
   * @default 30000
   */
  idleMs?: number | undefined;
  /**
   * Keys kept warm at once; the least recently claimed key beyond it is emptied.
   * @default 3
   */
  maxKeys?: number | undefined;
}

interface Member {
  processes: RuntimeSandbox;
  /** Set when its processes exited while waiting in the pool. */
  dead: boolean;
}

interface Slot {
  spec: WarmSpec;
  ready: Member[];
  /** Members of this key being started. */
  starting: number;
  /** Members wanted now: `size`, doubled on each miss up to `maxSize`. */
  target: number;
  /** When a create last claimed from this key (ms since the epoch). */
  lastClaim: number;
  /** Set after a failed start: no refill until the next claim asks again. */
  failed: boolean;
  /** Creates waiting for a start in flight, first come first served; each gets one member (or none). */
  waiters: Array<(member: Member | undefined) => void>;
}

/** Default members per key. */
const DEFAULT_WARM_POOL_SIZE = 2;
/** Default most members per key under demand. */
const DEFAULT_WARM_POOL_MAX_SIZE = 8;
/** The fewest members starting at once by default, also on one core (a start waits on I/O too). */
const MIN_WARM_POOL_CONCURRENCY = 2;
/** The share of the sandboxes' memory the pool may hold by default. */
const DEFAULT_WARM_POOL_MEMORY_SHARE = 1 / 4;
const MIB = 1024 * 1024;
/** Default quiet time after which a grown key shrinks back. */
const DEFAULT_WARM_POOL_IDLE_MS = 30_000;
/** Default number of keys kept warm. */
const DEFAULT_WARM_POOL_KEYS = 3;

/** The pool key of a spec: everything fixed when a sandbox starts. */
function warmKey(spec: WarmSpec): string {
  return JSON.stringify([spec.layers, spec.cpuCount, spec.memoryMB, spec.allowInternetAccess]);
}

function alive(slot: Slot): number {
  return slot.ready.filter((member) => !member.dead).length;
}

/** Pre-started sandboxes, claimed by create. */
export class WarmPool {
  private readonly size: number;
  private readonly maxSize: number;
  private readonly concurrency: number;
  private readonly idleMs: number;
  private readonly maxKeys: number;
  private readonly memoryShareMB: number;
  /** Insertion order is recency: a claim moves its key to the end. */
  private readonly slots = new Map<string, Slot>();
  /** Members being started; close() and forgetLayer() wait for them. */
  private readonly starts = new Set<Promise<void>>();
  /** Members of dropped keys being stopped; close() waits for them. */
  private readonly discarding = new Set<Promise<void>>();
  private shrinkTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: WarmPoolOptions) {
    this.size = Math.max(0, Math.floor(opts.size ?? DEFAULT_WARM_POOL_SIZE));
    this.maxSize = Math.max(this.size, Math.floor(opts.maxSize ?? DEFAULT_WARM_POOL_MAX_SIZE));
    this.concurrency = Math.max(
      1,
      Math.floor(opts.concurrency ?? Math.max(MIN_WARM_POOL_CONCURRENCY, availableParallelism())),
    );
    const budget = (opts.runtime as Partial<SandboxRuntime>).sandboxesMemoryBytes;
    this.memoryShareMB =
      opts.memoryShareMB ??
      (budget ? Math.floor((budget * DEFAULT_WARM_POOL_MEMORY_SHARE) / MIB) : Infinity);
    this.idleMs = Math.max(0, opts.idleMs ?? DEFAULT_WARM_POOL_IDLE_MS);
    this.maxKeys = Math.max(1, Math.floor(opts.maxKeys ?? DEFAULT_WARM_POOL_KEYS));
  }

  /**
   * Takes a ready member for `spec`, or `undefined` when none is ready (the
   * caller starts one itself, and the key's target grows). Either way the key
   * becomes the most recently used one and its refill is scheduled.
   */
  claim(spec: WarmSpec): RuntimeSandbox | undefined {
    const taken = this.take(spec);
    this.refill();
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
      this.refill();
      return taken?.member?.processes;
    }
    const { slot } = taken;
    const waiting =
      slot.starting > slot.waiters.length
        ? new Promise<Member | undefined>((resolve) => slot.waiters.push(resolve))
        : undefined;
    this.refill();
    return (await waiting)?.processes;
  }

  /** Takes a ready member of `spec`'s key (growing the key on a miss); undefined when the pool is off. */
  private take(spec: WarmSpec): { slot: Slot; member: Member | undefined } | undefined {
    if (this.closed || this.size === 0) return undefined;
    const known = this.slots.has(warmKey(spec));
    const slot = this.touch(spec);
    slot.failed = false;
    slot.lastClaim = Date.now();
    let member: Member | undefined;
    while ((member = slot.ready.shift()) && member.dead);
    // A miss on a key already kept warm means creates outran its refill; a
    // first create of a template is no such sign.
    if (!member && known && slot.target < this.maxSize) {
      slot.target = Math.min(this.maxSize, slot.target * 2);
      this.opts.log(`warm pool: no ready sandbox for a create; keeping ${slot.target} ready`);
    }
    return { slot, member };
  }

  /** Keeps `spec` warm without claiming (e.g. the `base` template at start). */
  prime(spec: WarmSpec): void {
    if (this.closed || this.size === 0) return;
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
        target: this.size,
        lastClaim: Date.now(),
        failed: false,
        waiters: [],
      };
    this.slots.set(key, slot);
    while (this.slots.size > this.maxKeys) {
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
    while (!this.closed && this.starts.size < this.concurrency) {
      const held = this.heldMemoryMB();
      const slot = [...this.slots.values()]
        .reverse()
        .find(
          (s) =>
            !s.failed &&
            alive(s) + s.starting < s.target &&
            held + s.spec.memoryMB <= this.memoryShareMB,
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
    let processes: RuntimeSandbox | undefined;
    try {
      processes = await this.opts.runtime.start({ ...slot.spec, sandboxID: id });
      await this.opts.warmUp?.(processes);
    } catch (err) {
      await processes?.stop().catch(() => undefined);
      slot.failed = true;
      this.opts.log(
        `warm pool: starting a sandbox for layers ${slot.spec.layers.join(",")} failed: ${String(err)}`,
      );
      await this.opts.runtime.destroy(id).catch(() => undefined);
      // A create waiting for this start starts its own sandbox.
      slot.waiters.shift()?.(undefined);
      return;
    }
    const member: Member = { processes, dead: false };
    void processes.exited.then(() => {
      if (member.dead) return;
      member.dead = true;
      // Still waiting in the pool: nobody else will clean it up.
      const idx = slot.ready.indexOf(member);
      if (idx >= 0) {
        slot.ready.splice(idx, 1);
        void this.opts.runtime.destroy(processes.sandboxID).catch(() => undefined);
      }
    });
    if (this.closed || this.slots.get(warmKey(slot.spec)) !== slot) {
      await this.discard(member);
      return;
    }
    const waiter = slot.waiters.shift();
    if (waiter) waiter(member);
    else slot.ready.push(member);
  }

  /** Arms one timer that shrinks keys grown beyond `size` once they are quiet. */
  private scheduleShrink(): void {
    if (this.shrinkTimer || this.closed) return;
    if (![...this.slots.values()].some((s) => s.target > this.size)) return;
    this.shrinkTimer = setTimeout(() => {
      this.shrinkTimer = undefined;
      this.shrinkIdle();
    }, this.idleMs);
    this.shrinkTimer.unref();
  }

  private shrinkIdle(): void {
    const now = Date.now();
    for (const slot of this.slots.values()) {
      if (slot.target <= this.size || now - slot.lastClaim < this.idleMs) continue;
      slot.target = this.size;
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
