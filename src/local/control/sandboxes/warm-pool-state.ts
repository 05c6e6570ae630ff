/**
 * The warm pool's bookkeeping: its members, one slot per key (what is fixed
 * when a sandbox starts) with its ready, starting and warming members, its
 * target and its waiting creates, and the state the claim (warm-pool-claim.ts),
 * start (warm-pool-start.ts) and trim (warm-pool-trim.ts) paths share. The
 * design is in warm-pool.ts.
 *
 * @module
 */
import type { RuntimeSandbox } from "../../runtime/types";
import type { MemberPriority } from "./member-priority";
import type { RefillRate } from "./refill-rate";
import type { ResolvedWarmPoolOptions, WarmPoolOptions, WarmSpec } from "./warm-pool-options";

/** A started sandbox of the pool, until a create claims it or the pool discards it. */
export interface Member {
  processes: RuntimeSandbox;
  /** Set when its processes exited while waiting in the pool. */
  dead: boolean;
  /** When it became ready (the pool's clock), for the claim's log line; NaN before. */
  readyAt: number;
  /** Set once a create took it (possibly before its warm-up ended). */
  claimed: boolean;
}

/** One key's members and demand. */
export interface Slot {
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

/** Everything a {@link WarmPool} holds, shared by the functions of its paths. */
export interface PoolState {
  readonly opts: WarmPoolOptions;
  /** Its options with every default applied and every bound enforced. */
  readonly limits: ResolvedWarmPoolOptions;
  /** How many members start at once, from the creates' rate. */
  readonly rate: RefillRate;
  /** Insertion order is recency: a claim moves its key to the end. */
  readonly slots: Map<string, Slot>;
  /** Members being started; close() and forgetLayer() wait for them. */
  readonly starts: Set<Promise<void>>;
  /** Members of dropped keys being stopped; close() waits for them. */
  readonly discarding: Set<Promise<void>>;
  /** Members step aside from a claim until its first exchange (member-priority.ts). */
  readonly priority: MemberPriority;
  shrinkTimer: NodeJS.Timeout | undefined;
  /** The refill after a claim, while it waits (warm-pool-claim.ts's `refillAfterClaim`). */
  refillTimer: NodeJS.Timeout | undefined;
  closed: boolean;
}

/** The pool key of a spec: everything fixed when a sandbox starts. */
export function warmKey(spec: WarmSpec): string {
  return JSON.stringify([spec.layers, spec.cpuCount, spec.memoryMB, spec.allowInternetAccess]);
}

/** The slot's ready members whose processes still run. */
export function alive(slot: Slot): number {
  return slot.ready.filter((member) => !member.dead).length;
}

/** The memory limits of every member, ready or starting, in MiB. */
export function heldMemoryMB(pool: PoolState): number {
  let mb = 0;
  for (const slot of pool.slots.values()) mb += (alive(slot) + slot.starting) * slot.spec.memoryMB;
  return mb;
}

/** Answers every create waiting on `slot`'s starts with no member: each starts its own. */
export function releaseWaiters(slot: Slot): void {
  for (const resolve of slot.waiters.splice(0)) resolve(undefined);
}
