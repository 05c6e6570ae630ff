/**
 * How the warm pool schedules its refill: parallel starts, growth when creates
 * outrun the refill, shrinking once quiet. The runtime here is an in-memory
 * one whose starts the test completes by hand, so the order of events is
 * exact; warm-pool.test.ts covers the pool on the real runtime.
 */
import type { RuntimeSandbox } from "../../runtime/types";
import { eventually } from "../../../../test/support/eventually";
import { closeFinishing, fillTo, HeldRuntime } from "../../../../test/support/held-runtime";
import { WarmPool, type WarmSpec } from "./warm-pool";

const SPEC: WarmSpec = { layers: ["base"], cpuCount: 1, memoryMB: 256, allowInternetAccess: true };

let n = 0;
function pool(
  rt: HeldRuntime,
  opts: {
    idleMs?: number;
    memoryShareMB?: number;
    now?: () => number;
    maxConcurrency?: number;
    refillDelayMs?: number;
    warmUp?: (processes: RuntimeSandbox) => Promise<void>;
  } = {},
): WarmPool {
  return new WarmPool({
    runtime: rt.runtime,
    newId: () => `i${String(++n).padStart(20, "0")}`,
    log: () => undefined,
    size: 2,
    maxSize: 8,
    concurrency: 2,
    // The order of claims and starts is what these tests are about; the delay has tests of its own.
    refillDelayMs: 0,
    ...opts,
  });
}

describe("the warm pool's refill", () => {
  it("starts as many members at once as its concurrency allows", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    p.prime(SPEC);
    expect(rt.pending).toHaveLength(2);
    await fillTo(rt, p, 2);
    expect(rt.maxPending).toBe(2);
    await p.close();
  });

  it("doubles a key's ready members after a create found none, up to maxSize", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    p.prime(SPEC);
    await fillTo(rt, p, 2);
    expect(p.claim(SPEC)).toBeDefined();
    expect(p.claim(SPEC)).toBeDefined();
    // Both refills are still starting: this create misses.
    expect(p.claim(SPEC)).toBeUndefined();
    await fillTo(rt, p, 4);
    for (let i = 0; i < 4; i++) expect(p.claim(SPEC)).toBeDefined();
    expect(p.claim(SPEC)).toBeUndefined();
    await fillTo(rt, p, 8);
    for (let i = 0; i < 8; i++) expect(p.claim(SPEC)).toBeDefined();
    expect(p.claim(SPEC)).toBeUndefined();
    await fillTo(rt, p, 8);
    await p.close();
  });

  it("starts the refill after a claim that handed a member over only once refillDelayMs passed", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt, { refillDelayMs: 50 });
    p.prime(SPEC);
    await fillTo(rt, p, 2);
    expect(p.claim(SPEC)).toBeDefined();
    expect(p.claim(SPEC)).toBeDefined();
    // The claimed sandboxes' /init, answers and first commands have the cores.
    expect(rt.pending).toHaveLength(0);
    await eventually(() => rt.pending.length === 2, { timeoutMs: 5_000, intervalMs: 5 });
    await closeFinishing(rt, p);
  });

  it("starts the refill waiting after a claim once a claimed sandbox's first exchange ended", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt, { refillDelayMs: 60_000 });
    p.prime(SPEC);
    await fillTo(rt, p, 2);
    expect(p.claim(SPEC)).toBeDefined();
    expect(rt.pending).toHaveLength(0);
    p.claimedExchanged();
    expect(rt.pending).toHaveLength(1);
    await closeFinishing(rt, p);
  });

  it("starts the refill at once after a claim that found no member", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt, { refillDelayMs: 60_000 });
    p.prime(SPEC);
    await fillTo(rt, p, 2);
    expect(p.claim(SPEC)).toBeDefined();
    expect(p.claim(SPEC)).toBeDefined();
    expect(rt.pending).toHaveLength(0);
    // The pool is behind the creates: waiting would only widen the gap.
    expect(p.claim(SPEC)).toBeUndefined();
    expect(rt.pending).toHaveLength(2);
    await closeFinishing(rt, p);
  });

  it("does not grow on the first create of a template it was not keeping warm", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    expect(p.claim(SPEC)).toBeUndefined();
    await fillTo(rt, p, 2);
    await p.close();
  });

  it("shrinks a grown key back to its size once no create claimed from it for idleMs", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt, { idleMs: 50 });
    p.prime(SPEC);
    await fillTo(rt, p, 2);
    p.claim(SPEC);
    p.claim(SPEC);
    p.claim(SPEC);
    await fillTo(rt, p, 4);
    await eventually(() => Promise.resolve(p.readyCount === 2), {
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    // The extra members are stopped and their layers destroyed.
    await eventually(() => Promise.resolve(rt.destroyed.length === 2), {
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    expect(rt.stopped).toEqual(rt.destroyed);
    await p.close();
  });

  it("hands a create that finds none ready the next member its key is starting, instead of a miss", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    p.prime(SPEC);
    await fillTo(rt, p, 2);
    expect(p.claim(SPEC)).toBeDefined();
    expect(p.claim(SPEC)).toBeDefined();
    // GIVEN both refills still starting, WHEN a create comes, THEN it waits for one of them.
    const starting = rt.pending.map((s) => s.spec.sandboxID);
    const soon = p.claimSoon(SPEC);
    rt.finishStarts();
    const rtOf = await soon;
    expect(starting).toContain(rtOf?.sandboxID);
    // The refill it asked for is still starting: close completes it.
    await closeFinishing(rt, p);
  });

  it("hands a create that finds none ready a member whose warm-up is under way, which never becomes ready for another", async () => {
    const rt = new HeldRuntime();
    const warmUps: Array<() => void> = [];
    const p = pool(rt, {
      warmUp: () => new Promise<void>((done) => warmUps.push(done)),
    });
    p.prime(SPEC);
    const starting = rt.pending.map((s) => s.spec.sandboxID);
    rt.finishStarts();
    await eventually(() => Promise.resolve(warmUps.length === 2));
    const taken = await p.claimSoon(SPEC);
    expect(starting).toContain(taken?.sandboxID);
    for (const done of warmUps.splice(0)) done();
    await eventually(() => Promise.resolve(p.readyCount === 1));
    expect(p.readyIds()).not.toContain(taken?.sandboxID);
    await closeFinishing(rt, p);
  });

  it("starts more members at once while creates come faster than one member starts, up to maxConcurrency", async () => {
    const rt = new HeldRuntime();
    let clock = 0;
    const p = pool(rt, { now: () => clock, maxConcurrency: 4 });
    p.prime(SPEC);
    // Each member takes 1 s to be ready.
    clock = 1_000;
    await fillTo(rt, p, 2);
    // GIVEN creates every 100 ms (ten per member start), WHEN they empty the key,
    // THEN the refill starts four at once (maxConcurrency, twice concurrency).
    for (const claimed of [true, true, false]) {
      clock += 100;
      expect(p.claim(SPEC) !== undefined).toBe(claimed);
    }
    expect(rt.pending).toHaveLength(4);
    await closeFinishing(rt, p);
  });

  it("keeps to its concurrency while creates come slower than one member starts", async () => {
    const rt = new HeldRuntime();
    let clock = 0;
    // Room for four at once, so that only the creates' rate keeps it to two.
    const p = pool(rt, { now: () => clock, maxConcurrency: 4 });
    p.prime(SPEC);
    clock = 1_000;
    await fillTo(rt, p, 2);
    // One create every 10 s, each member ready in 1 s: two at once are plenty.
    for (const claimed of [true, true, false]) {
      clock += 10_000;
      expect(p.claim(SPEC) !== undefined).toBe(claimed);
    }
    expect(rt.pending).toHaveLength(2);
    await closeFinishing(rt, p);
  });

  it("answers a waiting create with no member when the pool closes, so it starts its own", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    p.prime(SPEC);
    const soon = p.claimSoon(SPEC);
    const closing = p.close();
    expect(await soon).toBeUndefined();
    rt.finishStarts();
    await closing;
  });

  it("never holds more members than its share of memory, however much creates ask", async () => {
    const rt = new HeldRuntime();
    // Room for two members of 256 MiB.
    const p = pool(rt, { memoryShareMB: 600 });
    p.prime(SPEC);
    await fillTo(rt, p, 2);
    for (let round = 0; round < 3; round++) {
      while (p.claim(SPEC));
      await fillTo(rt, p, 2);
      expect(rt.maxPending).toBeLessThanOrEqual(2);
    }
    await p.close();
  });

  it("stops every member, started or starting, on close()", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    p.prime(SPEC);
    await fillTo(rt, p, 2);
    p.claim(SPEC);
    await closeFinishing(rt, p);
    expect(p.readyCount).toBe(0);
    expect(rt.destroyed).toHaveLength(2);
  });
});
