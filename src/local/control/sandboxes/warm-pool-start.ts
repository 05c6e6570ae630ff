/**
 * The warm pool's starts: the refill that starts members up to each key's
 * target within the pool's bounds, and one member's path from its start
 * through its warm-up to ready (or to a waiting create, or to a failure that
 * stops its key's refill). The design is in warm-pool.ts.
 *
 * @module
 */
import type { RuntimeSandbox } from "../../runtime/types";
import {
  alive,
  heldMemoryMB,
  warmKey,
  type Member,
  type PoolState,
  type Slot,
} from "./warm-pool-state";
import { discard, scheduleShrink } from "./warm-pool-trim";

/**
 * Starts members, most recently used key first, until every key has its
 * target, `concurrency` are starting, or one more would pass the pool's
 * share of memory.
 */
export function refill(pool: PoolState): void {
  const concurrency = pool.rate.startsAtOnce();
  while (!pool.closed && pool.starts.size < concurrency) {
    const held = heldMemoryMB(pool);
    const slot = [...pool.slots.values()]
      .reverse()
      .find(
        (s) =>
          !s.failed &&
          alive(s) + s.starting < s.target &&
          held + s.spec.memoryMB <= pool.limits.memoryShareMB,
      );
    if (!slot) break;
    slot.starting++;
    const p = startOne(pool, slot).finally(() => {
      slot.starting--;
      pool.starts.delete(p);
      refill(pool);
    });
    pool.starts.add(p);
  }
  scheduleShrink(pool);
}

async function startOne(pool: PoolState, slot: Slot): Promise<void> {
  const id = pool.opts.newId();
  pool.priority.add(id);
  const t0 = pool.limits.now();
  let processes: RuntimeSandbox;
  try {
    processes = await pool.opts.runtime.start({ ...slot.spec, sandboxID: id });
  } catch (err) {
    await startFailed(pool, slot, id, undefined, err);
    return;
  }
  const startMs = pool.limits.now() - t0;
  const member: Member = { processes, dead: false, readyAt: NaN, claimed: false };
  void processes.exited.then(() => {
    if (member.dead) return;
    member.dead = true;
    // Still waiting in the pool: nobody else will clean it up (a member
    // warming up is cleaned up by its failed warm-up).
    const idx = slot.ready.indexOf(member);
    if (idx >= 0) {
      slot.ready.splice(idx, 1);
      pool.priority.release(processes.sandboxID);
      void pool.opts.runtime.destroy(processes.sandboxID).catch(() => undefined);
    }
  });
  if (pool.closed || pool.slots.get(warmKey(slot.spec)) !== slot) {
    await discard(pool, member);
    return;
  }
  // A create already waiting gets it once warmed up, like any other: handed over at its
  // agent's answer, its first command paid the agent's load and more (bench:local, load 14-19).
  slot.warming.push(member);
  try {
    await pool.opts.warmUp?.(processes, slot.spec);
  } catch (err) {
    slot.warming.splice(slot.warming.indexOf(member), 1);
    // Claimed while warming up: the create owns it now, and its own first
    // command says what is wrong.
    if (member.claimed) return;
    member.dead = true;
    await startFailed(pool, slot, id, processes, err);
    return;
  }
  const readyMs = pool.limits.now() - t0;
  pool.rate.noteReady(readyMs);
  const idx = slot.warming.indexOf(member);
  if (idx >= 0) slot.warming.splice(idx, 1);
  if (member.claimed) return;
  member.readyAt = pool.limits.now();
  pool.opts.log(
    `warm pool: ${id} ready in ${readyMs.toFixed(0)} ms (start ${startMs.toFixed(0)}, warm-up ${(readyMs - startMs).toFixed(0)}; ${pool.starts.size} starting of at most ${pool.rate.startsAtOnce()})`,
  );
  if (pool.closed || pool.slots.get(warmKey(slot.spec)) !== slot) {
    await discard(pool, member);
    return;
  }
  const waiter = slot.waiters.shift();
  if (waiter) {
    member.claimed = true;
    pool.priority.release(id);
    waiter(member);
  } else slot.ready.push(member);
}

/** A start or warm-up failed: the key stops refilling until claimed again, and a waiting create starts its own. */
async function startFailed(
  pool: PoolState,
  slot: Slot,
  id: string,
  processes: RuntimeSandbox | undefined,
  err: unknown,
): Promise<void> {
  pool.priority.release(id);
  await processes?.stop().catch(() => undefined);
  slot.failed = true;
  pool.opts.log(
    `warm pool: starting a sandbox for layers ${slot.spec.layers.join(",")} failed: ${String(err)}`,
  );
  await pool.opts.runtime.destroy(id).catch(() => undefined);
  slot.waiters.shift()?.(undefined);
}
