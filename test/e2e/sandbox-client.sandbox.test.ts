/**
 * The typed sandbox client against the REAL local service: sandbox reads
 * (metrics, envs, health) and security (access token, signed URLs).
 */
import { createSandboxClient, type SandboxClient } from "../../src/client/sandbox";
import type { TestService } from "../support/service";
import { failureOf, useSandboxClientFixture } from "./sandbox-client.support";

jest.setTimeout(120_000);

let client: SandboxClient;
let svc: TestService;
let sandboxID: string;
let token: string;

useSandboxClientFixture((fx) => ({ client, svc, sandboxID, token } = fx));

describe("sandbox reads", () => {
  it("reports metrics in camelCase", async () => {
    const m = await client.metrics();
    expect(m.cpuCount).toBeGreaterThan(0);
    expect(m.memTotal).toBeGreaterThan(0);
    expect(m.diskTotal).toBeGreaterThan(0);
    expect(m.timestamp.getFullYear()).toBeGreaterThanOrEqual(2024);
  });

  it("reads envd's global environment", async () => {
    const envs = await client.envs();
    expect(envs).toMatchObject({ E2B_SANDBOX: "true", E2B_SANDBOX_ID: sandboxID });
  });

  it("reports the sandbox healthy", async () => {
    expect(await client.health()).toBe(true);
  });
});

describe("security", () => {
  it("fails with unauthenticated without the access token, without showing it", async () => {
    const anonymous = createSandboxClient({ sandboxID, baseUrl: svc.sandboxUrl });
    const err = await failureOf(anonymous.stat("/home/user"));
    expect(err.code).toBe("unauthenticated");
    const run = await failureOf(anonymous.run("true"));
    expect(run.code).toBe("unauthenticated");
    expect(run.message).not.toContain(token);
  });

  it("downloads through a signed URL with no headers at all", async () => {
    await client.uploadBytes("signed/a.txt", "signed content");
    const url = client.downloadUrl("/home/user/signed/a.txt", { expiresInSeconds: 120 });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("signed content");
  });

  it("uploads through a signed URL", async () => {
    const url = client.uploadUrl("/home/user/signed/up.txt", { user: "user" });
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: "via url",
    });
    expect(res.status).toBe(200);
    expect(await client.readText("signed/up.txt")).toBe("via url");
  });

  it("fails when a signed URL is used for another path", async () => {
    const url = new URL(client.downloadUrl("/home/user/signed/a.txt"));
    url.searchParams.set("path", "/home/user/signed/up.txt");
    // Routed by header: without it a shared URL cannot tell which sandbox a bad signature was for.
    const res = await fetch(url, { headers: { "E2b-Sandbox-Id": sandboxID } });
    expect(res.status).toBe(401);
  });
});
