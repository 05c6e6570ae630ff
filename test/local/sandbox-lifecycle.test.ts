import { call, createSandbox, runThroughProxy } from "./support";
import { useService, type TestService } from "../support/service";
import { eventually } from "../support/eventually";
import { redact } from "../../src/errors";

let svc: TestService;
useService((s) => (svc = s));

describe("sandbox lifecycle", () => {
  it("creates a sandbox with 201 and reports it running with its metadata and the service's domain", async () => {
    const res = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      timeout: 60,
      metadata: { team: "a" },
      envVars: { FOO: "bar" },
    });
    expect(res.status).toBe(201);
    const sbx = res.body as Record<string, unknown>;
    expect(sbx).toMatchObject({
      templateID: "base",
      envdVersion: expect.any(String),
      domain: svc.domain,
    });
    expect(sbx.sandboxID).toMatch(/^i[a-z0-9]{20}$/);
    expect(sbx.envdAccessToken).toBeUndefined();

    const info = await call(svc, "GET", `/sandboxes/${String(sbx.sandboxID)}`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      sandboxID: sbx.sandboxID,
      state: "running",
      metadata: { team: "a" },
      cpuCount: expect.any(Number),
      memoryMB: expect.any(Number),
      lifecycle: { autoResume: false, onTimeout: "kill" },
      domain: svc.domain,
    });
    const run = await runThroughProxy(
      svc,
      String(sbx.sandboxID),
      "echo $FOO $E2B_SANDBOX $E2B_SANDBOX_ID",
    );
    expect(run.stdout.trim()).toBe(`bar true ${String(sbx.sandboxID)}`);
  });

  it("fails when the template does not exist with 404", async () => {
    const res = await call(svc, "POST", "/sandboxes", {
      templateID: "no-such-template",
      timeout: 60,
    });
    expect(res).toMatchObject({
      status: 404,
      body: { code: 404, message: "template 'no-such-template' not found" },
    });
  });

  it("fails when the API key is wrong with 401", async () => {
    const res = await call({ apiUrl: svc.apiUrl, apiKey: "e2b_0000" }, "GET", "/v2/sandboxes");
    expect(res.status).toBe(401);
    expect((res.body as { message: string }).message).toContain("Invalid API key");
  });

  it("answers the control health check without a key", async () => {
    const res = await fetch(`${svc.apiUrl}/health`);
    expect(res.status).toBe(200);
  });

  it("pauses with 204, refuses a second pause with 409 and resumes with 201", async () => {
    const { sandboxID } = await createSandbox(svc);
    await runThroughProxy(svc, sandboxID, "echo kept > /home/user/kept.txt");
    expect((await call(svc, "POST", `/sandboxes/${sandboxID}/pause`, {})).status).toBe(204);
    expect((await call(svc, "POST", `/sandboxes/${sandboxID}/pause`, {})).body).toMatchObject({
      code: 409,
    });
    expect((await call(svc, "GET", `/sandboxes/${sandboxID}`)).body).toMatchObject({
      state: "paused",
    });
    const proxied = await fetch(`${svc.sandboxUrl}/health`, {
      headers: { "E2b-Sandbox-Id": sandboxID },
    });
    expect(proxied.status).toBe(502);
    expect(await proxied.json()).toEqual({
      sandboxId: sandboxID,
      message: "The sandbox was not found",
      code: 502,
    });

    const resumed = await call(svc, "POST", `/sandboxes/${sandboxID}/resume`, { timeout: 60 });
    expect(resumed.status).toBe(201);
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/resume`, { timeout: 60 })).status,
    ).toBe(409);
    const run = await runThroughProxy(svc, sandboxID, "cat /home/user/kept.txt");
    expect(run.stdout.trim()).toBe("kept");
  });

  it("connects with 200 to a running sandbox and with 201 to a paused one", async () => {
    const { sandboxID } = await createSandbox(svc, {}, "/v2/sandboxes");
    expect(
      (await call(svc, "POST", `/v2/sandboxes/${sandboxID}/connect`, { timeout: 60 })).status,
    ).toBe(200);
    await call(svc, "POST", `/sandboxes/${sandboxID}/pause`);
    const res = await call(svc, "POST", `/sandboxes/${sandboxID}/connect`, { timeout: 60 });
    expect(res.status).toBe(201);
    expect((res.body as { envdAccessToken?: string }).envdAccessToken).toMatch(/^[0-9a-f]{64}$/);
    expect(
      (await call(svc, "POST", "/sandboxes/iunknownunknownunkno/connect", { timeout: 5 })).status,
    ).toBe(404);
  });

  it("connect only extends the end time, /timeout may shorten it", async () => {
    const { sandboxID } = await createSandbox(svc, { timeout: 600 });
    const endAt = async () =>
      Date.parse(
        ((await call(svc, "GET", `/sandboxes/${sandboxID}`)).body as { endAt: string }).endAt,
      );
    const before = await endAt();
    await call(svc, "POST", `/sandboxes/${sandboxID}/connect`, { timeout: 10 });
    expect(await endAt()).toBe(before);
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/refreshes`, { duration: 1 })).status,
    ).toBe(204);
    expect(await endAt()).toBe(before);
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/timeout`, { timeout: 100 })).status,
    ).toBe(204);
    expect(await endAt()).toBeLessThan(before);
  });

  it("kills a sandbox whose timeout was shortened to zero", async () => {
    const { sandboxID } = await createSandbox(svc);
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/timeout`, { timeout: -5 })).status,
    ).toBe(204);
    await eventually(
      async () => (await call(svc, "GET", `/sandboxes/${sandboxID}`)).status === 404,
    );
  });

  it("pauses instead of killing on timeout when autoPause was set", async () => {
    const { sandboxID } = await createSandbox(svc, { autoPause: true });
    await call(svc, "POST", `/sandboxes/${sandboxID}/timeout`, { timeout: 0 });
    await eventually(
      async () =>
        ((await call(svc, "GET", `/sandboxes/${sandboxID}`)).body as { state?: string }).state ===
        "paused",
    );
    const logs = await call(svc, "GET", `/v2/sandboxes/${sandboxID}/logs`);
    expect((logs.body as { logs: { message: string }[] }).logs.map((l) => l.message)).toEqual(
      expect.arrayContaining(["sandbox created", "sandbox paused: timeout reached"]),
    );
  });

  it("fails a filesystem-only auto-pause without autoPause, or with autoResume, with 400", async () => {
    const count = async () => ((await call(svc, "GET", "/v2/sandboxes")).body as unknown[]).length;
    const before = await count();
    const without = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      autoPauseMemory: false,
    });
    expect(without).toMatchObject({
      status: 400,
      body: {
        message:
          "body.autoPauseMemory: false applies only with autoPause: true: set autoPause or drop autoPauseMemory",
      },
    });
    const withResume = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      autoPause: true,
      autoPauseMemory: false,
      autoResume: { enabled: true },
    });
    expect(withResume.status).toBe(400);
    expect((withResume.body as { message: string }).message).toContain(
      "cannot be combined with autoResume",
    );
    expect(await count()).toBe(before);
  });

  it("kills with 204, then answers 404 and 502 through the proxy", async () => {
    const { sandboxID } = await createSandbox(svc);
    expect((await call(svc, "DELETE", `/sandboxes/${sandboxID}`)).status).toBe(204);
    expect((await call(svc, "DELETE", `/sandboxes/${sandboxID}`)).body).toMatchObject({
      code: 404,
    });
    expect((await call(svc, "GET", `/sandboxes/${sandboxID}`)).status).toBe(404);
    const proxied = await fetch(`${svc.sandboxUrl}/health`, {
      headers: { "E2b-Sandbox-Id": sandboxID },
    });
    expect(proxied.status).toBe(502);
  });

  it("redacts a secure sandbox's access token while it lives, and holds it no longer once it is killed", async () => {
    const { sandboxID, envdAccessToken } = await createSandbox(svc, { secure: true });
    const token = String(envdAccessToken);
    expect(redact(`token ${token}`)).toBe("token [redacted]");
    expect((await call(svc, "DELETE", `/sandboxes/${sandboxID}`)).status).toBe(204);
    // A long-running service kept every token it ever made (two strings per sandbox) until now.
    expect(redact(`token ${token}`)).toBe(`token ${token}`);
  });

  it("returns metrics sampled from the running sandbox", async () => {
    const { sandboxID } = await createSandbox(svc);
    const res = await call(svc, "GET", `/sandboxes/${sandboxID}/metrics?start=0`);
    expect(res.status).toBe(200);
    const samples = res.body as Record<string, unknown>[];
    expect(samples.length).toBeGreaterThan(0);
    expect(samples[0]).toMatchObject({
      cpuCount: expect.any(Number),
      memTotal: expect.any(Number),
      timestampUnix: expect.any(Number),
    });
    const batch = await call(svc, "GET", `/sandboxes/metrics?sandbox_ids=${sandboxID}`);
    expect(Object.keys((batch.body as { sandboxes: object }).sandboxes)).toEqual([sandboxID]);
  });
});
