import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { eventually } from "../../test/support/eventually";
import { scavenge, ScavengeEvery } from "./scavenge";

describe("ScavengeEvery", () => {
  it("scavenges once every everyBytes counted, not before", () => {
    let runs = 0;
    const every = new ScavengeEvery(1024, () => runs++);
    every.add(1000);
    expect(runs).toBe(0);
    every.add(24);
    expect(runs).toBe(1);
    // The count starts again after each scavenge.
    every.add(1023);
    expect(runs).toBe(1);
    every.add(5000);
    expect(runs).toBe(2);
  });
});

describe("scavenge", () => {
  it("runs a young-generation collection", async () => {
    let minor = 0;
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        if (
          (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ===
          constants.NODE_PERFORMANCE_GC_MINOR
        )
          minor++;
    });
    observer.observe({ entryTypes: ["gc"] });
    try {
      scavenge();
      await eventually(() => minor >= 1);
    } finally {
      observer.disconnect();
    }
  });
});
