/**
 * Conformance: sandbox lifecycle through the official SDK, both pinned lines.
 * GIVEN a local service, WHEN the SDK drives it through its public API,
 * THEN every call behaves as it does against E2B's cloud.
 */
import { SDK_TARGETS } from "./sdk-targets";
import { eventually } from "../support/eventually";
import { connectionOpts, useService, type TestService } from "../support/service";

describe.each(SDK_TARGETS)("lifecycle with $label", ({ sdk }) => {
  const { Sandbox } = sdk;
  let service: TestService;
  useService((s) => (service = s));

  it("creates a sandbox with metadata, envs and a timeout, and reports it running", async () => {
    const sbx = await Sandbox.create("base", {
      ...connectionOpts(service),
      metadata: { suite: "conformance", case: "create" },
      envs: { GREETING: "hello" },
      timeoutMs: 120_000,
    });
    try {
      expect(sbx.sandboxId).toMatch(/^[a-z0-9]+$/);
      expect(await sbx.isRunning()).toBe(true);
      const info = await sbx.getInfo();
      expect(info.sandboxId).toBe(sbx.sandboxId);
      expect(info.state).toBe("running");
      expect(info.metadata).toEqual({ suite: "conformance", case: "create" });
      expect(info.endAt.getTime() - info.startedAt.getTime()).toBeGreaterThan(100_000);
      const result = await sbx.commands.run("echo $GREETING");
      expect(result.stdout.trim()).toBe("hello");
    } finally {
      await sbx.kill();
    }
  });

  it("lists sandboxes page by page with metadata and state filters", async () => {
    const tag = `list-${Date.now()}`;
    const a = await Sandbox.create({ ...connectionOpts(service), metadata: { tag } });
    const b = await Sandbox.create({ ...connectionOpts(service), metadata: { tag } });
    const other = await Sandbox.create({ ...connectionOpts(service), metadata: { tag: "other" } });
    try {
      const paginator = Sandbox.list({
        ...connectionOpts(service),
        limit: 1,
        query: { metadata: { tag }, state: ["running"] },
      });
      const first = await paginator.nextItems();
      expect(first).toHaveLength(1);
      expect(paginator.hasNext).toBe(true);
      expect(paginator.nextToken).toBeTruthy();
      const second = await paginator.nextItems();
      expect(second).toHaveLength(1);
      const ids = [...first, ...second].map((s) => s.sandboxId).sort();
      expect(ids).toEqual([a.sandboxId, b.sandboxId].sort());
      if (paginator.hasNext) expect(await paginator.nextItems()).toHaveLength(0);
      expect(paginator.hasNext).toBe(false);

      const paused = Sandbox.list({
        ...connectionOpts(service),
        query: { metadata: { tag }, state: ["paused"] },
      });
      expect(await paused.nextItems()).toHaveLength(0);
    } finally {
      await Promise.all([a.kill(), b.kill(), other.kill()]);
    }
  });

  it("shortens the lifetime with setTimeout, after which the sandbox is gone", async () => {
    const sbx = await Sandbox.create({ ...connectionOpts(service), timeoutMs: 300_000 });
    await sbx.setTimeout(1_000);
    await eventually(async () => !(await sbx.isRunning()), { timeoutMs: 15_000 });
    expect(await Sandbox.kill(sbx.sandboxId, connectionOpts(service))).toBe(false);
  });

  it("pauses a sandbox, keeps its files and processes, and resumes it on connect", async () => {
    const sbx = await Sandbox.create({ ...connectionOpts(service), timeoutMs: 120_000 });
    try {
      await sbx.files.write("/home/user/kept.txt", "still here");
      const sleeper = await sbx.commands.run("sleep 600", { background: true });
      expect(await sbx.pause()).toBe(true);
      expect(await sbx.isRunning()).toBe(false);
      expect((await Sandbox.getInfo(sbx.sandboxId, connectionOpts(service))).state).toBe("paused");
      // Pausing again is a conflict the SDK reports as false.
      expect(await Sandbox.pause(sbx.sandboxId, connectionOpts(service))).toBe(false);

      const resumed = await Sandbox.connect(sbx.sandboxId, connectionOpts(service));
      expect(await resumed.isRunning()).toBe(true);
      expect(await resumed.files.read("/home/user/kept.txt")).toBe("still here");
      const pids = (await resumed.commands.list()).map((p) => p.pid);
      expect(pids).toContain(sleeper.pid);
    } finally {
      await sbx.kill();
    }
  });

  it("connects to a running sandbox without shortening its lifetime", async () => {
    const sbx = await Sandbox.create({ ...connectionOpts(service), timeoutMs: 600_000 });
    try {
      const before = await sbx.getInfo();
      const again = await Sandbox.connect(sbx.sandboxId, {
        ...connectionOpts(service),
        timeoutMs: 60_000,
      });
      const after = await again.getInfo();
      expect(after.endAt.getTime()).toBeGreaterThanOrEqual(before.endAt.getTime());
    } finally {
      await sbx.kill();
    }
  });

  it("reports metrics sampled from the sandbox", async () => {
    const sbx = await Sandbox.create({ ...connectionOpts(service), timeoutMs: 120_000 });
    try {
      // The first sample is taken once the sandbox runs; wait for it rather than a fixed delay.
      const metrics = await eventually(
        async () => {
          const sampled = await sbx.getMetrics();
          return sampled.length > 0 && sampled;
        },
        { timeoutMs: 10_000 },
      );
      const last = metrics[metrics.length - 1];
      expect(last.cpuCount).toBeGreaterThanOrEqual(1);
      expect(last.memTotal).toBeGreaterThan(0);
      expect(last.memUsed).toBeGreaterThan(0);
      expect(last.diskTotal).toBeGreaterThan(0);
    } finally {
      await sbx.kill();
    }
  });

  it("kills a sandbox once: a second kill reports false and getInfo fails with not found", async () => {
    const sbx = await Sandbox.create(connectionOpts(service));
    expect(await sbx.kill()).toBe(true);
    expect(await sbx.kill()).toBe(false);
    await expect(Sandbox.getInfo(sbx.sandboxId, connectionOpts(service))).rejects.toThrow(
      /not found|doesn't exist/i,
    );
  });

  it("drops the open streams of a killed sandbox, so waiting commands report it was killed", async () => {
    const sbx = await Sandbox.create(connectionOpts(service));
    const handle = await sbx.commands.run("sleep 600", { background: true });
    const waiting = handle.wait().then(
      () => "finished",
      (err: unknown) => String(err),
    );
    await Sandbox.kill(sbx.sandboxId, connectionOpts(service));
    expect(await waiting).toMatch(/killed or reached its end of life/);
    expect(await sbx.isRunning()).toBe(false);
  });

  it("answers Template.exists for the built-in base template and an unknown one", async () => {
    expect(await sdk.Template.exists("base", connectionOpts(service))).toBe(true);
    expect(await sdk.Template.exists("no-such-template-xyz", connectionOpts(service))).toBe(false);
  });
});
