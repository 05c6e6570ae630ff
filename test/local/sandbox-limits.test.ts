/**
 * The team's concurrent-sandbox limit (E2B's 429 and message, through the
 * official SDK) and the service-wide `--max-sandboxes` limit.
 */
import { RateLimitError, Sandbox } from "e2b";
import { connectionOpts, useService, type TestService } from "../support/service";
import { createTestRuntime, sandboxSpec, type TestRuntime } from "../support/runtime";
import { SandboxIacError } from "../../src/errors";

jest.setTimeout(180_000);

const E2B_MESSAGE =
  "you have reached the maximum number of concurrent E2B sandboxes (2). If you need more, please visit 'https://e2b.dev/docs/billing'";

describe("the API key's concurrent-sandbox limit", () => {
  let svc: TestService;
  useService((s) => (svc = s), { limits: { maxSandboxesPerKey: 2 } });

  it("answers a create past the limit with E2B's 429 and message, counting running sandboxes only", async () => {
    const opts = { ...connectionOpts(svc), timeoutMs: 120_000 };
    const first = await Sandbox.create(opts);
    const second = await Sandbox.create(opts);
    try {
      const refused = await Sandbox.create(opts).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(RateLimitError);
      expect((refused as Error).message).toBe(
        `Rate limit exceeded, please try again later - ${E2B_MESSAGE}`,
      );
      // A paused sandbox does not count; resuming it past the limit is refused the same way.
      await first.pause();
      const third = await Sandbox.create(opts);
      const resumed = await Sandbox.connect(first.sandboxId, opts).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(resumed).toBeInstanceOf(RateLimitError);
      expect((resumed as Error).message).toContain(E2B_MESSAGE);
      await third.kill();
      const back = await Sandbox.connect(first.sandboxId, opts);
      expect((await back.commands.run("echo back")).stdout).toBe("back\n");
    } finally {
      await Promise.all([first.kill(), second.kill()]);
    }
  });
});

describe("the service-wide sandbox limit (--max-sandboxes)", () => {
  let t: TestRuntime;
  beforeAll(async () => {
    t = await createTestRuntime({ maxSandboxes: 1 });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it("refuses a start past the limit with rate_limited, and starts again once one stopped", async () => {
    const one = await t.runtime.start(sandboxSpec(t, "lim1"));
    const refused = await t.runtime.start(sandboxSpec(t, "lim2")).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(SandboxIacError.hasCode(refused, "rate_limited")).toBe(true);
    expect((refused as Error).message).toContain(
      "the service already runs its maximum of 1 sandboxes (serve --max-sandboxes)",
    );
    await one.stop();
    const two = await t.runtime.start(sandboxSpec(t, "lim2"));
    await two.stop();
  });
});
