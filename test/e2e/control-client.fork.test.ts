/**
 * The typed control client's `forkSandbox` against the real local service.
 */
import type { ControlClient } from "../../src/client/control";
import { SandboxIacError } from "../../src/errors";
import { controlClientOf, startService, type TestService } from "../support/service";

let svc: TestService;
let api: ControlClient;

beforeAll(async () => {
  svc = await startService();
  api = controlClientOf(svc);
});
afterAll(async () => {
  await svc?.close();
});

describe("forkSandbox", () => {
  it("returns one started sandbox per fork, with the parent's metadata and a token of its own", async () => {
    const parent = await api.createSandbox({
      templateID: "base",
      timeout: 120,
      secure: true,
      metadata: { team: "forks" },
    });
    const results = await api.forkSandbox(parent.sandboxID, { count: 2, timeout: 60 });
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.error).toBeUndefined();
      expect(r.sandbox?.sandboxID).not.toBe(parent.sandboxID);
      expect(r.sandbox?.envdAccessToken).toBeDefined();
      expect(r.sandbox?.envdAccessToken).not.toBe(parent.envdAccessToken);
      const detail = await api.getSandbox(r.sandbox!.sandboxID);
      expect(detail.metadata).toEqual({ team: "forks" });
      await api.killSandbox(r.sandbox!.sandboxID);
    }
    await api.killSandbox(parent.sandboxID);
  });

  it("refuses a count over 100 before sending anything, and an unknown sandbox with not_found", async () => {
    const tooMany = await api.forkSandbox("inotasandbox000000000", { count: 101 }).catch((e) => e);
    expect(SandboxIacError.hasCode(tooMany, "invalid_argument")).toBe(true);
    const unknown = await api.forkSandbox("inotasandbox000000000").catch((e) => e);
    expect(SandboxIacError.hasCode(unknown, "not_found")).toBe(true);
  });
});
