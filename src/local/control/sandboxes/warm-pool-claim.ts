/**
 * The warm pool's claims: a create takes a ready member of its key, else one
 * warming up, else waits for a start of its key under way; a miss grows the
 * key's target; and the refill after a claim waits for the claimed sandbox's
 * first exchange. The design is in warm-pool.ts.
 *
 * @module
 */
import type { RuntimeSandbox } from "../../runtime/types";
import type { WarmSpec } from "./warm-pool-options";
import { refill } from "./warm-pool-start";
import { alive, warmKey, type Member, type PoolState, type Slot } from "./warm-pool-state";
import { touch } from "./warm-pool-trim";

/**
 * Takes a ready member for `spec`, or `undefined` when none is ready (the
 * caller starts one itself, and the key's target grows). Either way the key
 * becomes the most recently used one and its refill is scheduled.
 */
export function claim(pool: PoolState, spec: WarmSpec): RuntimeSandbox | undefined {
  return handOver(pool, take(pool, spec));
}

/**
 * What a claim took, settled at once: the refill (after the claim's window
 * when a member was handed over), the claim's log line, the member's processes.
 */
function handOver(pool: PoolState, taken: Taken | undefined): RuntimeSandbox | undefined {
  if (taken?.member) refillAfterClaim(pool);
  else refill(pool);
  if (taken) logClaim(pool, taken.slot, taken.member, undefined);
  return taken?.member?.processes;
}

/**
 * Like {@link claim}, but when no member is ready and one of the key's
 * starts is in flight (and not promised to an earlier create), waits for
 * that start: a create then pays what is left of a start already under
 * way, never a whole cold start more. Resolves `undefined` when nothing is
 * starting for it or that start fails (the caller starts one itself).
 */
export async function claimSoon(
  pool: PoolState,
  spec: WarmSpec,
): Promise<RuntimeSandbox | undefined> {
  const taken = take(pool, spec);
  if (!taken || taken.member) return handOver(pool, taken);
  const { slot } = taken;
  // A member warming up is nearer than any start: its create's /init and
  // first command wait only for what is left of the agent's load.
  const warming = slot.warming.find((member) => !member.claimed && !member.dead);
  if (warming) {
    warming.claimed = true;
    pool.priority.release(warming.processes.sandboxID);
    refillAfterClaim(pool);
    pool.opts.log(
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
  refill(pool);
  if (!waiting) {
    logClaim(pool, slot, undefined, undefined);
    return undefined;
  }
  const t0 = pool.limits.now();
  const member = await waiting;
  logClaim(pool, slot, member, pool.limits.now() - t0);
  return member?.processes;
}

/**
 * One line per claim, so a create's latency can be told apart in the
 * service log (bench/local.js reads them): a ready member and how long it
 * waited, a start waited for, or none (the create starts its own).
 */
function logClaim(
  pool: PoolState,
  slot: Slot,
  member: Member | undefined,
  waitedMs: number | undefined,
): void {
  const counts = `${alive(slot)} ready, ${slot.starting} starting, target ${slot.target}`;
  if (!member) {
    pool.opts.log(`warm pool: claim missed, the create starts cold (${counts})`);
  } else if (waitedMs === undefined) {
    const age = pool.limits.now() - member.readyAt;
    pool.opts.log(
      `warm pool: claimed ${member.processes.sandboxID} ready (age ${age.toFixed(0)} ms; ${counts})`,
    );
  } else {
    pool.opts.log(
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
function refillAfterClaim(pool: PoolState): void {
  if (pool.limits.refillDelayMs === 0) return refill(pool);
  if (pool.refillTimer || pool.closed) return;
  pool.priority.stepAside();
  pool.refillTimer = setTimeout(() => {
    pool.refillTimer = undefined;
    pool.priority.resume();
    refill(pool);
  }, pool.limits.refillDelayMs);
}

/**
 * A claimed sandbox's first proxied exchange (its create's first command,
 * usually) ended: the refill waiting for it ({@link refillAfterClaim})
 * starts now rather than at the end of `refillDelayMs`.
 */
export function claimedExchanged(pool: PoolState): void {
  if (!pool.refillTimer) return;
  clearTimeout(pool.refillTimer);
  pool.refillTimer = undefined;
  pool.priority.resume();
  refill(pool);
}

/** A key's slot after a claim, and the ready member it took, if any. */
interface Taken {
  slot: Slot;
  member: Member | undefined;
}

/** Takes a ready member of `spec`'s key (growing the key on a miss); undefined when the pool is off. */
function take(pool: PoolState, spec: WarmSpec): Taken | undefined {
  if (pool.closed || pool.limits.size === 0) return undefined;
  const known = pool.slots.has(warmKey(spec));
  const slot = touch(pool, spec);
  slot.failed = false;
  slot.lastClaim = Date.now();
  pool.rate.noteClaim();
  let member: Member | undefined;
  while ((member = slot.ready.shift()) && member.dead);
  if (member) {
    member.claimed = true;
    pool.priority.release(member.processes.sandboxID);
  }
  // A miss on a key already kept warm means creates outran its refill; a
  // first create of a template is no such sign.
  if (!member && known && slot.target < pool.limits.maxSize) {
    slot.target = Math.min(pool.limits.maxSize, slot.target * 2);
    pool.opts.log(`warm pool: no ready sandbox for a create; keeping ${slot.target} ready`);
  }
  return { slot, member };
}
