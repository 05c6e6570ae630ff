import type { SandboxStats } from "../../runtime/types";
import { MetricsStore } from "./metrics";

const sample: SandboxStats = {
  timestampUnix: 1,
  cpuCount: 1,
  cpuUsedPct: 0,
  memUsed: 1,
  memTotal: 2,
  memCache: 0,
  diskUsed: 1,
  diskTotal: 2,
};

describe("MetricsStore", () => {
  it("makes readers wait for a sandbox's first sample while it is taken", async () => {
    const store = new MetricsStore();
    let finish!: () => void;
    store.firstSample(
      "a",
      new Promise<void>((resolve) => (finish = resolve)).then(() => store.add("a", sample)),
    );
    let settled = false;
    const waiting = store.settled(["a", "b"]).then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    finish();
    await waiting;
    expect(store.latest("a")).toEqual(sample);
  });

  it("does not wait for the first sample of a dropped sandbox", async () => {
    const store = new MetricsStore();
    store.firstSample("a", new Promise<void>(() => undefined));
    store.drop("a");
    await store.settled(["a"]);
    expect(store.latest("a")).toBeUndefined();
  });
});
