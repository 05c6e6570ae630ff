import { BackgroundSet } from "./background-set";

/** Whether `promise` has settled, after every callback already queued has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("BackgroundSet", () => {
  it("lets a start in the foreground go on at once, having waited 0 ms", async () => {
    const set = new BackgroundSet();
    await expect(set.whenForeground("a")).resolves.toBe(0);
    set.set("a", true);
    set.set("a", false);
    await expect(set.whenForeground("a")).resolves.toBe(0);
  });

  it("holds a start in the background until its sandbox comes back, and only that sandbox's", async () => {
    const set = new BackgroundSet();
    set.set("a", true);
    set.set("b", true);
    const a = set.whenForeground("a", 60_000);
    const b = set.whenForeground("b", 60_000);
    expect(await settled(a)).toBe(false);
    set.set("a", false);
    expect(await settled(a)).toBe(true);
    expect(await settled(b)).toBe(false);
    expect(set.has("b")).toBe(true);
    set.releaseAll();
    expect(await settled(b)).toBe(true);
    // Released, not moved: still in the background for the cgroup's sake.
    expect(set.has("b")).toBe(true);
  });

  it("lets a start left in the background go on after the bound", async () => {
    const set = new BackgroundSet();
    set.set("a", true);
    const waited = await set.whenForeground("a", 5);
    expect(waited).toBeGreaterThan(0);
    expect(set.has("a")).toBe(true);
  });
});
