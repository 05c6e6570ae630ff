/**
 * The Pulumi functions are thin wrappers over the core's data sources: the
 * same results, arguments checked before any request.
 */
import { SandboxIacError } from "../../src/errors";
import { getSandbox, getSandboxMetrics, listSandboxes } from "../../src/pulumi";
import { eventually } from "../support/eventually";
import { startTestService, type TestService } from "./support";

jest.setTimeout(120_000);

let svc: TestService;
let sandboxID: string;

beforeAll(async () => {
  svc = await startTestService();
  const created = await svc.call("POST", "/sandboxes", {
    templateID: "base",
    timeout: 300,
    secure: true,
    metadata: { suite: "functions" },
  });
  expect(created.status).toBe(201);
  sandboxID = (created.body as { sandboxID: string }).sandboxID;
});

afterAll(async () => {
  if (sandboxID) await svc.call("DELETE", `/sandboxes/${sandboxID}`);
  await svc?.close();
});

const options = () => ({ apiUrl: svc.apiUrl, apiKey: svc.apiKey });

describe("Pulumi functions", () => {
  it("getSandbox returns the sandbox's fields, the access token included", async () => {
    const sandbox = await getSandbox(sandboxID, options());
    expect(sandbox).toMatchObject({ sandboxID, templateID: "base", state: "running" });
    expect(sandbox.envdAccessToken).not.toBe("");
    expect(sandbox.metadata).toEqual({ suite: "functions" });
  });

  it("listSandboxes filters by metadata and state", async () => {
    const found = await listSandboxes({ metadata: { suite: "functions" } }, options());
    expect(found.map((s) => s.sandboxID)).toEqual([sandboxID]);
    expect(
      await listSandboxes({ metadata: { suite: "functions" }, state: ["paused"] }, options()),
    ).toEqual([]);
  });

  it("getSandboxMetrics returns samples of the range", async () => {
    const start = Math.floor(Date.now() / 1000) - 600;
    const samples = await eventually(
      async () => {
        const got = await getSandboxMetrics(sandboxID, { start }, options());
        return got.length > 0 && got;
      },
      { timeoutMs: 15_000 },
    );
    for (const s of samples) expect(s.timestampUnix).toBeGreaterThanOrEqual(start);
    expect(samples[0].cpuCount).toBeGreaterThanOrEqual(1);
    expect(samples[0].memTotal).toBeGreaterThan(0);
    // A range that ended long before the sandbox started holds no sample.
    expect(await getSandboxMetrics(sandboxID, { start: 1, end: 2 }, options())).toEqual([]);
  });

  it("fails on a bad sandbox ID with every problem named, before any request", async () => {
    const before = svc.requests.length;
    const failure = await getSandbox("Not An ID", options()).catch((err: unknown) => err);
    expect(SandboxIacError.hasCode(failure, "invalid_argument")).toBe(true);
    expect((failure as Error).message).toContain("sandboxID: must be a sandbox ID like");
    expect((failure as Error).message).toContain('got "Not An ID"');
    const metrics = await getSandboxMetrics(sandboxID, { start: -1 }, options()).catch(
      (err: unknown) => err,
    );
    expect((metrics as Error).message).toContain("start: must be unix seconds >= 0");
    expect(svc.requests.slice(before)).toEqual([]);
  });

  it("fails with not_found for a sandbox that does not exist", async () => {
    const failure = await getSandbox("igone0000000000000000", options()).catch(
      (err: unknown) => err,
    );
    expect(SandboxIacError.hasCode(failure, "not_found")).toBe(true);
  });
});
