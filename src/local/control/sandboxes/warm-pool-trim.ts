/**
 * The warm pool's trimming: the least recently used keys past `maxKeys` are
 * dropped as another is used ({@link touch}), keys grown beyond `size` fall
 * back to it once quiet for `idleMs`, and members no key wants any more are
 * stopped and destroyed. The design is in warm-pool.ts.
 *
 * @module
 */
import type { WarmSpec } from "./warm-pool-options";
import { releaseWaiters, warmKey, type Member, type PoolState, type Slot } from "./warm-pool-state";

/**
 * The slot of `spec`'s key, made when new, and moved to the most recently
 * used end; the least recently used keys past `maxKeys` are dropped.
 */
export function touch(pool: PoolState, spec: WarmSpec): Slot {
  const key = warmKey(spec);
  let slot = pool.slots.get(key);
  if (slot) pool.slots.delete(key);
  else
    slot = {
      spec: { ...spec, layers: [...spec.layers] },
      ready: [],
      starting: 0,
      warming: [],
      target: pool.limits.size,
      lastClaim: Date.now(),
      failed: false,
      waiters: [],
    };
  pool.slots.set(key, slot);
  while (pool.slots.size > pool.limits.maxKeys) {
    const [oldKey, old] = pool.slots.entries().next().value as [string, Slot];
    pool.slots.delete(oldKey);
    releaseWaiters(old);
    for (const member of old.ready) discardLater(pool, member);
  }
  return slot;
}

/** Arms one timer that shrinks keys grown beyond `size` once they are quiet. */
export function scheduleShrink(pool: PoolState): void {
  if (pool.shrinkTimer || pool.closed) return;
  if (![...pool.slots.values()].some((s) => s.target > pool.limits.size)) return;
  pool.shrinkTimer = setTimeout(() => {
    pool.shrinkTimer = undefined;
    shrinkIdle(pool);
  }, pool.limits.idleMs);
  pool.shrinkTimer.unref();
}

function shrinkIdle(pool: PoolState): void {
  const now = Date.now();
  for (const slot of pool.slots.values()) {
    if (slot.target <= pool.limits.size || now - slot.lastClaim < pool.limits.idleMs) continue;
    slot.target = pool.limits.size;
    // The oldest members go first: the newest have the warmest caches.
    const extra = slot.ready.length - slot.target;
    if (extra > 0) for (const member of slot.ready.splice(0, extra)) discardLater(pool, member);
  }
  scheduleShrink(pool);
}

/** Discards `member` in the background; the pool's close() waits for it. */
function discardLater(pool: PoolState, member: Member): void {
  const p = discard(pool, member).finally(() => pool.discarding.delete(p));
  pool.discarding.add(p);
}

/** Stops and destroys `member`; a failure is logged, never thrown. */
export async function discard(pool: PoolState, member: Member): Promise<void> {
  member.dead = true;
  pool.priority.release(member.processes.sandboxID);
  try {
    await member.processes.stop();
    await pool.opts.runtime.destroy(member.processes.sandboxID);
  } catch (err) {
    pool.opts.log(
      `warm pool: discarding sandbox ${member.processes.sandboxID} failed: ${String(err)}`,
    );
  }
}
