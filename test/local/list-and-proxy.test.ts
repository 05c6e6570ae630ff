import * as http from "node:http";
import { Sandbox } from "e2b";
import { filesSignature } from "../../src/wire/files-signature";
import { call, createSandbox, runThroughProxy } from "./support";
import { connectionOpts, useService, type TestService } from "../support/service";

let svc: TestService;
useService((s) => (svc = s));

/** The metadata filter exactly as e2b@2.51 encodes it (three times). */
function sdkMetadata(filter: Record<string, string>): string {
  const inner = Object.entries(filter)
    .map(
      ([k, v]) =>
        `${encodeURIComponent(encodeURIComponent(k))}=${encodeURIComponent(encodeURIComponent(v))}`,
    )
    .join("&");
  return encodeURIComponent(inner);
}

describe("GET /v2/sandboxes", () => {
  it("pages with X-Next-Token only while another page exists, filters by metadata and state", async () => {
    const tag = `run-${Date.now()}`;
    const a = await createSandbox(svc, { metadata: { tag, "a b": "c&d" } });
    const b = await createSandbox(svc, { metadata: { tag } });
    const c = await createSandbox(svc, { metadata: { tag } });
    await call(svc, "POST", `/sandboxes/${c.sandboxID}/pause`);

    const first = await call(svc, "GET", `/v2/sandboxes?limit=2&metadata=${sdkMetadata({ tag })}`);
    expect(first.status).toBe(200);
    const token = first.headers.get("x-next-token");
    expect(token).toBeTruthy();
    expect((first.body as { sandboxID: string }[]).map((s) => s.sandboxID)).toEqual([
      c.sandboxID,
      b.sandboxID,
    ]);
    expect(first.headers.get("x-total-running")).toBe("2");
    const second = await call(
      svc,
      "GET",
      `/v2/sandboxes?limit=2&metadata=${sdkMetadata({ tag })}&nextToken=${token ?? ""}`,
    );
    expect((second.body as { sandboxID: string }[]).map((s) => s.sandboxID)).toEqual([a.sandboxID]);
    expect(second.headers.get("x-next-token")).toBeNull();

    const special = await call(
      svc,
      "GET",
      `/v2/sandboxes?metadata=${sdkMetadata({ tag, "a b": "c&d" })}`,
    );
    expect((special.body as { sandboxID: string }[]).map((s) => s.sandboxID)).toEqual([
      a.sandboxID,
    ]);

    const paused = await call(
      svc,
      "GET",
      `/v2/sandboxes?state=paused&metadata=${sdkMetadata({ tag })}`,
    );
    expect(paused.body).toEqual([
      expect.objectContaining({ sandboxID: c.sandboxID, state: "paused", clientID: "6532622b" }),
    ]);
    expect(paused.headers.get("x-total-running")).toBeNull();

    const asc = await call(
      svc,
      "GET",
      `/v2/sandboxes?order=asc&state=running,paused&metadata=${sdkMetadata({ tag })}`,
    );
    expect((asc.body as { sandboxID: string }[]).map((s) => s.sandboxID)).toEqual([
      a.sandboxID,
      b.sandboxID,
      c.sandboxID,
    ]);

    const legacy = await call(
      svc,
      "GET",
      `/sandboxes?metadata=${encodeURIComponent(`tag=${tag}`)}`,
    );
    expect((legacy.body as { sandboxID: string }[]).map((s) => s.sandboxID)).toEqual([
      b.sandboxID,
      a.sandboxID,
    ]);
  });
});

describe("sandbox proxy", () => {
  it("enforces the access token of a secure sandbox and keeps it across pause and resume", async () => {
    const { sandboxID, envdAccessToken } = await createSandbox(svc, { secure: true });
    expect(envdAccessToken).toMatch(/^[0-9a-f]{64}$/);
    expect((await runThroughProxy(svc, sandboxID, "true")).status).toBe(401);
    expect((await runThroughProxy(svc, sandboxID, "echo ok", envdAccessToken)).stdout).toBe("ok\n");

    const metrics = await fetch(`${svc.sandboxUrl}/metrics`, {
      headers: { "E2b-Sandbox-Id": sandboxID },
    });
    expect(metrics.status).toBe(401);
    const okMetrics = await fetch(`${svc.sandboxUrl}/metrics`, {
      headers: { "E2b-Sandbox-Id": sandboxID, "X-Access-Token": envdAccessToken ?? "" },
    });
    expect(await okMetrics.json()).toMatchObject({
      cpu_count: expect.any(Number),
      mem_total: expect.any(Number),
      ts: expect.any(Number),
    });

    await call(svc, "POST", `/sandboxes/${sandboxID}/pause`);
    const resumed = await call(svc, "POST", `/sandboxes/${sandboxID}/resume`, { timeout: 60 });
    expect((resumed.body as { envdAccessToken: string }).envdAccessToken).toBe(envdAccessToken);
    expect((await runThroughProxy(svc, sandboxID, "echo again", envdAccessToken)).stdout).toBe(
      "again\n",
    );
  });

  it("routes a <port>-<id> Host under its domain, which the SDK takes from the create answer; answers 421 under another name and 502 for an unknown sandbox", async () => {
    // The runner's E2B_DOMAIN, if any, is not the service's: only the answer can give the SDK this one.
    const sbx = await Sandbox.create({ ...connectionOpts(svc), domain: "elsewhere.test" });
    const host = sbx.getHost(49983);
    expect(host).toBe(`49983-${sbx.sandboxId}.${svc.domain}`);
    const url = new URL(svc.sandboxUrl);
    // fetch forbids setting Host; node:http does not.
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get({ host: url.hostname, port: url.port, path: "/health", headers }, (r) => {
            let body = "";
            r.on("data", (d: Buffer) => (body += d.toString()));
            r.on("end", () => resolve({ status: r.statusCode ?? 0, body }));
          })
          .on("error", reject);
      });
    expect((await get({ Host: host })).status).toBe(204);
    const foreign = await get({ Host: `49983-${sbx.sandboxId}.elsewhere.test` });
    expect({ status: foreign.status, body: JSON.parse(foreign.body) as unknown }).toEqual({
      status: 421,
      body: {
        code: 421,
        message: expect.stringContaining(
          `the Host "49983-${sbx.sandboxId}.elsewhere.test" is not under this service's domain "${svc.domain}": sandboxes are served at <port>-<sandboxID>.${svc.domain}`,
        ) as unknown,
      },
    });
    expect(JSON.parse(foreign.body)).toMatchObject({
      message: expect.stringContaining("start the service with --domain") as unknown,
    });
    await sbx.kill();
    const unknown = await fetch(`${svc.sandboxUrl}/health`, {
      headers: { "E2b-Sandbox-Id": "iunknown" },
    });
    expect(unknown.status).toBe(502);
    expect(await unknown.json()).toEqual({
      sandboxId: "iunknown",
      message: "The sandbox was not found",
      code: 502,
    });
  });

  it("serves a signed /files link without routing headers", async () => {
    const { sandboxID, envdAccessToken } = await createSandbox(svc, { secure: true });
    await runThroughProxy(svc, sandboxID, "echo signed > /home/user/s.txt", envdAccessToken);
    const sig = filesSignature({
      path: "/home/user/s.txt",
      operation: "read",
      user: "user",
      accessToken: envdAccessToken ?? "",
    });
    const res = await fetch(
      `${svc.sandboxUrl}/files?path=${encodeURIComponent("/home/user/s.txt")}&username=user&signature=${encodeURIComponent(sig)}`,
    );
    expect({ status: res.status, text: await res.text() }).toEqual({
      status: 200,
      text: "signed\n",
    });
    // A signature that matches no sandbox is refused as envd refuses a forged one.
    const bad = await fetch(
      `${svc.sandboxUrl}/files?path=/home/user/s.txt&username=user&signature=v1_wrong`,
    );
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({
      code: 401,
      message: expect.stringContaining("no running sandbox matches the signature"),
    });
  });

  it("answers CORS preflights and adds CORS headers to sandbox responses", async () => {
    const pre = await fetch(`${svc.sandboxUrl}/process.Process/Start`, {
      method: "OPTIONS",
      headers: {
        Origin: "http://example.test",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "e2b-sandbox-id",
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-headers")).toBe("e2b-sandbox-id");
  });

  it("drops an open stream abruptly when the sandbox is killed", async () => {
    const { sandboxID } = await createSandbox(svc);
    const msg = Buffer.from(
      JSON.stringify({
        process: { cmd: "/bin/bash", args: ["-c", "echo started; sleep 600"], envs: {} },
        stdin: false,
      }),
    );
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), msg]);
    frame.writeUInt32BE(msg.length, 1);
    const res = await fetch(`${svc.sandboxUrl}/process.Process/Start`, {
      method: "POST",
      headers: { "Content-Type": "application/connect+json", "E2b-Sandbox-Id": sandboxID },
      body: frame,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    expect((await call(svc, "DELETE", `/sandboxes/${sandboxID}`)).status).toBe(204);
    // A clean end would resolve with done; an abrupt drop rejects.
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return "clean end";
      })(),
    ).rejects.toThrow();
  });
});
