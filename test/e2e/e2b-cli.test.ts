/**
 * The official E2B CLI (`@e2b/cli`, pinned) against the local service: login
 * (its browser step played by the test, which hands the CLI an access token
 * from `POST /access-tokens`), then `sandbox list/logs/metrics/kill` and
 * `template list`; and with only the variables of `sandbox-iac serve`'s ready
 * line (no login), `sandbox list -s running,paused`, `template list` and
 * `sandbox logs`. Nothing needs Docker; nothing leaves this machine.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readyLine } from "../../src/cli/ready-line";
import { resolveAddressing } from "../../src/local/addressing";
import { startService, type TestService } from "../support/service";

const CLI = path.join(path.dirname(require.resolve("@e2b/cli/package.json")), "dist", "index.js");

let svc: TestService;
let home: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), "e2b-cli-home-"));
  svc = await startService();
  // No E2B_API_KEY: the CLI must get the key from its login. The docs host
  // (the browser step) points nowhere: the test plays that part.
  env = {
    PATH: process.env.PATH,
    HOME: home,
    E2B_API_URL: svc.apiUrl,
    E2B_SANDBOX_URL: svc.sandboxUrl,
    E2B_DOCS_BASE: "http://127.0.0.1:9",
    NO_COLOR: "1",
  };
});
afterAll(async () => {
  await svc?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

/** Runs the CLI; `onStdout` sees the output as it arrives. */
function e2b(
  args: string[],
  onStdout?: (soFar: string) => void,
  withEnv: NodeJS.ProcessEnv = env,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: withEnv });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      onStdout?.(out);
    });
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, out }));
  });
}

async function api(method: string, route: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${svc.apiUrl}${route}`, {
    method,
    headers: { "X-API-Key": svc.apiKey, "Content-Type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return res.status === 204 ? undefined : res.json();
}

describe("the E2B CLI against the local service", () => {
  it("logs in with an access token and selects the local team and its API key", async () => {
    const { accessToken } = (await api("POST", "/access-tokens")) as { accessToken: string };
    let answered: Promise<Response> | undefined;
    const login = await e2b(["auth", "login"], (soFar) => {
      const next = /[?&]next=([^&\s]+)/.exec(soFar)?.[1];
      if (!next || answered) return;
      // What the browser would do: redirect to the CLI's callback with the tokens.
      const q = new URLSearchParams({
        email: "local@sandbox-iac",
        accessToken,
        refreshToken: "unused",
        tokenEndpoint: "http://127.0.0.1:9/token",
        revokeEndpoint: "http://127.0.0.1:9/revoke",
        clientId: "sandbox-iac",
      });
      answered = fetch(`${decodeURIComponent(next)}/?${q.toString()}`, { redirect: "manual" });
    });
    expect((await answered)?.status).toBe(302);
    expect(login.code).toBe(0);
    expect(login.out).toMatch(/Logged in as local@sandbox-iac with selected project local/);
    const config = JSON.parse(fs.readFileSync(path.join(home, ".e2b", "config.json"), "utf8")) as {
      projectApiKey: string;
    };
    expect(config.projectApiKey).toBe(svc.apiKey);
  });

  it("refuses a forged access token on GET /teams", async () => {
    const res = await fetch(`${svc.apiUrl}/teams`, {
      headers: { Authorization: "Bearer e30.e30.forged" },
    });
    expect(res.status).toBe(401);
  });

  it("lists, shows logs and metrics of, and kills sandboxes; lists templates", async () => {
    const { sandboxID } = (await api("POST", "/sandboxes", {
      templateID: "base",
      timeout: 120,
    })) as { sandboxID: string };

    const list = await e2b(["sandbox", "list"]);
    expect(list.code).toBe(0);
    expect(list.out).toContain(sandboxID);

    const logs = await e2b(["sandbox", "logs", sandboxID]);
    expect(logs.code).toBe(0);
    expect(logs.out).toMatch(/INFO.*sandbox created/);

    const metrics = await e2b(["sandbox", "metrics", sandboxID]);
    expect(metrics.code).toBe(0);
    expect(metrics.out).toMatch(/CPU:.*Memory:/);

    const templates = await e2b(["template", "list"]);
    expect(templates.code).toBe(0);
    expect(templates.out).toMatch(/base\s+base/);

    const kill = await e2b(["sandbox", "kill", sandboxID]);
    expect(kill.code).toBe(0);
    expect(kill.out).toContain(`Sandbox ${sandboxID} has been killed`);
    expect((await e2b(["sandbox", "list"])).out).not.toContain(sandboxID);
  });

  it("needs only the variables of serve's ready line: lists running and paused sandboxes, templates and logs", async () => {
    // A fresh home: no login, the CLI reads the key from E2B_API_KEY.
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), "e2b-cli-ready-"));
    const vars = Object.fromEntries(
      [
        ...readyLine({
          ...svc,
          ...resolveAddressing(undefined, undefined, Number(new URL(svc.apiUrl).port)),
          tls: false,
        }).matchAll(/\b(E2B_[A-Z_]+)=(\S+)/g),
      ].map((m) => [m[1], m[2]]),
    );
    expect(Object.keys(vars).sort()).toEqual([
      "E2B_API_KEY",
      "E2B_API_URL",
      "E2B_DOMAIN",
      "E2B_SANDBOX_URL",
      "E2B_VOLUME_API_URL",
    ]);
    const readyEnv = { PATH: process.env.PATH, HOME: fresh, NO_COLOR: "1", ...vars };
    try {
      const running = (await api("POST", "/sandboxes", { templateID: "base", timeout: 120 })) as {
        sandboxID: string;
      };
      const paused = (await api("POST", "/sandboxes", { templateID: "base", timeout: 120 })) as {
        sandboxID: string;
      };
      await api("POST", `/sandboxes/${paused.sandboxID}/pause`);

      const list = await e2b(["sandbox", "list", "-s", "running,paused"], undefined, readyEnv);
      expect(list.code).toBe(0);
      expect(list.out).toMatch(new RegExp(`${running.sandboxID}.*Running`));
      expect(list.out).toMatch(new RegExp(`${paused.sandboxID}.*Paused`));

      const templates = await e2b(["template", "list"], undefined, readyEnv);
      expect(templates.code).toBe(0);
      expect(templates.out).toMatch(/base\s+base/);

      const logs = await e2b(["sandbox", "logs", running.sandboxID], undefined, readyEnv);
      expect(logs.code).toBe(0);
      expect(logs.out).toMatch(/INFO.*sandbox created/);
      for (const id of [running.sandboxID, paused.sandboxID])
        await api("DELETE", `/sandboxes/${id}`);
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  });
});
