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
 * Bounds: at most `size` members per key, at most `maxKeys` keys (the least
 * recently used key is dropped), and one member starting at a time, so the
 * refill never competes with more than one core of the machine.
 *
 * @module
 */
import type { RuntimeSandbox, SandboxRuntime, SandboxSpec } from "../../runtime/types";

/** What a pool member is started with: a {@link SandboxSpec} without its id. */
export type WarmSpec = Omit<SandboxSpec, "sandboxId">;

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
  warmUp?: (rt: RuntimeSandbox) => Promise<void>;
  /**
   * Ready members kept per key; 0 disables the pool.
   * @default 2
   */
  size?: number;
  /**
   * Keys kept warm at once; the least recently claimed key beyond it is emptied.
   * @default 3
   */
  maxKeys?: number;
}

interface Member {
  rt: RuntimeSandbox;
  /** Set when its processes exited while waiting in the pool. */
  dead: boolean;
}

interface Slot {
  spec: WarmSpec;
  ready: Member[];
  /** Set after a failed start: no refill until the next claim asks again. */
  failed: boolean;
}

/** Default members per key. */
export const DEFAULT_WARM_POOL_SIZE = 2;
/** Default number of keys kept warm. */
export const DEFAULT_WARM_POOL_KEYS = 3;

/** The pool key of a spec: everything fixed when a sandbox starts. */
export function warmKey(spec: WarmSpec): string {
  return JSON.stringify([spec.layers, spec.cpuCount, spec.memoryMB, spec.allowInternetAccess]);
}

/** Pre-started sandboxes, claimed by create. */
export class WarmPool {
  private readonly size: number;
  private readonly maxKeys: number;
  /** Insertion order is recency: a claim moves its key to the end. */
  private readonly slots = new Map<string, Slot>();
  private filling: Promise<void> | undefined;
  /** Members of dropped keys being stopped; close() waits for them. */
  private readonly discarding = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly opts: WarmPoolOptions) {
    this.size = Math.max(0, Math.floor(opts.size ?? DEFAULT_WARM_POOL_SIZE));
    this.maxKeys = Math.max(1, Math.floor(opts.maxKeys ?? DEFAULT_WARM_POOL_KEYS));
  }

  /**
   * Takes a ready member for `spec`, or `undefined` when none is ready (the
   * caller starts one itself). Either way the key becomes the most recently
   * used one and its refill is scheduled.
   */
  claim(spec: WarmSpec): RuntimeSandbox | undefined {
    if (this.closed || this.size === 0) return undefined;
    const slot = this.touch(spec);
    slot.failed = false;
    let member: Member | undefined;
    while ((member = slot.ready.shift()) && member.dead);
    this.refill();
    return member?.rt;
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
      dropped.push(...slot.ready);
    }
    // A member being started on the layer is discarded by the fill loop,
    // which finds its key gone; waiting for it keeps the layer unmounted.
    await this.filling;
    for (const m of dropped) await this.discard(m);
  }

  /** Ready members, over every key (for tests and logs). */
  get readyCount(): number {
    let n = 0;
    for (const slot of this.slots.values()) n += slot.ready.filter((m) => !m.dead).length;
    return n;
  }

  /** Ids of the ready members (they are no sandbox of the API yet). */
  readyIds(): string[] {
    return [...this.slots.values()].flatMap((s) =>
      s.ready.filter((m) => !m.dead).map((m) => m.rt.sandboxId),
    );
  }

  /** Stops the refill, then stops and destroys every member. */
  async close(): Promise<void> {
    this.closed = true;
    await this.filling;
    await Promise.all([...this.discarding]);
    const members = [...this.slots.values()].flatMap((s) => s.ready);
    this.slots.clear();
    // Sequential: bounded by size x maxKeys, and each stop is a handful of cgroup writes.
    for (const m of members) await this.discard(m);
  }

  private touch(spec: WarmSpec): Slot {
    const key = warmKey(spec);
    let slot = this.slots.get(key);
    if (slot) this.slots.delete(key);
    else slot = { spec: { ...spec, layers: [...spec.layers] }, ready: [], failed: false };
    this.slots.set(key, slot);
    while (this.slots.size > this.maxKeys) {
      const [oldKey, old] = this.slots.entries().next().value as [string, Slot];
      this.slots.delete(oldKey);
      for (const m of old.ready) {
        const p = this.discard(m).finally(() => this.discarding.delete(p));
        this.discarding.add(p);
      }
    }
    return slot;
  }

  private refill(): void {
    if (this.filling || this.closed) return;
    this.filling = this.fillLoop().finally(() => {
      this.filling = undefined;
    });
  }

  /** Starts one member at a time, most recently used key first, until every key is full. */
  private async fillLoop(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const slot = [...this.slots.values()]
        .reverse()
        .find((s) => !s.failed && s.ready.filter((m) => !m.dead).length < this.size);
      if (!slot) return;
      const id = this.opts.newId();
      let rt: RuntimeSandbox | undefined;
      try {
        rt = await this.opts.runtime.start({ ...slot.spec, sandboxId: id });
        await this.opts.warmUp?.(rt);
      } catch (err) {
        await rt?.stop().catch(() => undefined);
        slot.failed = true;
        this.opts.log(
          `warm pool: starting a sandbox for layers ${slot.spec.layers.join(",")} failed: ${String(err)}`,
        );
        await this.opts.runtime.destroy(id).catch(() => undefined);
        continue;
      }
      const member: Member = { rt, dead: false };
      void rt.exited.then(() => {
        if (member.dead) return;
        member.dead = true;
        // Still waiting in the pool: nobody else will clean it up.
        const idx = slot.ready.indexOf(member);
        if (idx >= 0) {
          slot.ready.splice(idx, 1);
          void this.opts.runtime.destroy(rt.sandboxId).catch(() => undefined);
        }
      });
      if (this.closed || this.slots.get(warmKey(slot.spec)) !== slot) {
        await this.discard(member);
        continue;
      }
      slot.ready.push(member);
    }
  }

  private async discard(m: Member): Promise<void> {
    m.dead = true;
    try {
      await m.rt.stop();
      await this.opts.runtime.destroy(m.rt.sandboxId);
    } catch (err) {
      this.opts.log(`warm pool: discarding sandbox ${m.rt.sandboxId} failed: ${String(err)}`);
    }
  }
}
