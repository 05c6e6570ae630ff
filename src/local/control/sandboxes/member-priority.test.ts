/**
 * The warm pool's members step aside while a claimed sandbox's create and
 * first exchange run (member-priority.ts). The runtime here is the in-memory
 * one of test/support/held-runtime.ts, which records which sandboxes are in
 * its background; src/local/runtime/background.test.ts covers what the real
 * runtime does with it.
 */
import { eventually } from "../../../../test/support/eventually";
import { closeFinishing, fillTo, HeldRuntime } from "../../../../test/support/held-runtime";
import { WarmPool, type WarmSpec } from "./warm-pool";

const SPEC: WarmSpec = { layers: ["base"], cpuCount: 1, memoryMB: 256, allowInternetAccess: true };

let n = 0;
function pool(rt: HeldRuntime, opts: { size?: number; refillDelayMs?: number } = {}): WarmPool {
  return new WarmPool({
    runtime: rt.runtime,
    newId: () => `m${String(++n).padStart(20, "0")}`,
    log: () => undefined,
    size: opts.size ?? 3,
    maxSize: 8,
    concurrency: 3,
    refillDelayMs: opts.refillDelayMs ?? 60_000,
  });
}

describe("the warm pool's members", () => {
  it("step aside from a claim until the claimed sandbox's first exchange ended", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    p.prime(SPEC);
    await fillTo(rt, p, 3);
    expect(rt.background.size).toBe(0);
    const others = p.readyIds();
    const claimed = p.claim(SPEC);
    expect(claimed).toBeDefined();
    expect([...rt.background].sort()).toEqual(
      others.filter((id) => id !== claimed?.sandboxID).sort(),
    );
    p.claimedExchanged();
    expect(rt.background.size).toBe(0);
    await closeFinishing(rt, p);
  });

  it("come back to the foreground once refillDelayMs passed without an exchange", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt, { refillDelayMs: 50 });
    p.prime(SPEC);
    await fillTo(rt, p, 3);
    p.claim(SPEC);
    expect(rt.background.size).toBe(2);
    await eventually(() => rt.background.size === 0, { timeoutMs: 5_000, intervalMs: 5 });
    await closeFinishing(rt, p);
  });

  it("include one claimed during another claim's window: it is brought to the foreground", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    p.prime(SPEC);
    await fillTo(rt, p, 3);
    const first = p.claim(SPEC);
    const second = p.claim(SPEC);
    expect(second).toBeDefined();
    expect(rt.background.has(second?.sandboxID ?? "")).toBe(false);
    expect(rt.background.has(first?.sandboxID ?? "")).toBe(false);
    expect(rt.background.size).toBe(1);
    await closeFinishing(rt, p);
  });

  it("start in the background while the others step aside", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt, { size: 1 });
    p.prime(SPEC);
    await fillTo(rt, p, 1);
    expect(p.claim(SPEC)).toBeDefined();
    // A miss refills at once, inside the first claim's window.
    expect(p.claim(SPEC)).toBeUndefined();
    expect(rt.pending.length).toBeGreaterThan(0);
    expect(rt.startedInBackground.sort()).toEqual(rt.pending.map((s) => s.spec.sandboxID).sort());
    p.claimedExchanged();
    expect(rt.background.size).toBe(0);
    await closeFinishing(rt, p);
  });

  it("that are gone are never moved again", async () => {
    const rt = new HeldRuntime();
    const p = pool(rt);
    p.prime(SPEC);
    await fillTo(rt, p, 3);
    const gone = p.readyIds();
    // The template's layer deleted: its members are stopped and destroyed.
    await p.forgetLayer("base");
    p.prime(SPEC);
    await fillTo(rt, p, 3);
    const claimed = p.claim(SPEC);
    expect(rt.background.size).toBe(2);
    for (const id of gone) expect(rt.background.has(id)).toBe(false);
    expect(rt.background.has(claimed?.sandboxID ?? "")).toBe(false);
    await closeFinishing(rt, p);
    expect(rt.background.size).toBe(0);
  });
});
