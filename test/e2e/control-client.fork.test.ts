/**
 * Forks against the real local service: the typed control client's
 * `forkSandbox`, and every policy a fork inherits from its parent (one test
 * per field of FORK_INHERITS), checked by what the fork does, not only by
 * what it reports.
 */
import * as http from "node:http";
import type { ControlClient } from "../../src/client/control";
import { SandboxIacError } from "../../src/errors";
import { FORK_INHERITS } from "../../src/local/control/sandboxes/fork-policy";
import { eventually } from "../support/eventually";
import { controlClientOf, startService, type TestService } from "../support/service";
import {
  ALLOWED_WITHIN_MS,
  BLOCKED_AFTER_MS,
  fetchProgram,
  startStandInInternet,
  type StandIn,
  STAND_IN_WAIT_MS,
} from "../isolation/stand-in-internet";
import { call, createSandbox, runThroughProxy } from "../local/support";

jest.setTimeout(180_000);

let svc: TestService;
let api: ControlClient;
let inet: StandIn;

beforeAll(async () => {
  inet = await startStandInInternet();
  svc = await startService();
  api = controlClientOf(svc);
}, STAND_IN_WAIT_MS + 60_000);
afterAll(async () => {
  await svc?.close();
  await inet?.close();
});

/** The `Sandbox` body of one fork of `parentID`, as the wire carries it. */
async function forkOf(
  parentID: string,
  timeout = 120,
): Promise<{ sandboxID: string; envdAccessToken?: string; trafficAccessToken?: string | null }> {
  const res = await call(svc, "POST", `/sandboxes/${parentID}/fork`, { timeout });
  expect(res.status).toBe(201);
  const [entry] = res.body as { sandbox?: { sandboxID: string }; error?: unknown }[];
  if (!entry?.sandbox) throw new Error(`fork failed: ${JSON.stringify(res.body)}`);
  return entry.sandbox;
}

async function detail(sandboxID: string): Promise<Record<string, unknown>> {
  return (await call(svc, "GET", `/sandboxes/${sandboxID}`)).body as Record<string, unknown>;
}

/**
 * Fetches `url` inside the sandbox; prints the body or `failed`. The deadline
 * starts once fetch is loaded (see fetchProgram), so a blocked fetch costs
 * 3 s rather than the 10 s that once covered loading fetch on a busy machine.
 */
async function fetchInside(
  sandboxID: string,
  url: string,
  timeoutMs = BLOCKED_AFTER_MS,
): Promise<string> {
  const code = fetchProgram(url, timeoutMs);
  return (await runThroughProxy(svc, sandboxID, `/.sandbox-iac/node -e '${code}'`)).stdout.trim();
}

/** GET `/` of port 8000 of `sandboxID` through the proxy, with the traffic token when given. */
function getPort8000(sandboxID: string, trafficToken?: string): Promise<number> {
  const url = new URL(svc.sandboxUrl);
  const headers: Record<string, string> = {
    "E2b-Sandbox-Id": sandboxID,
    "E2b-Sandbox-Port": "8000",
    ...(trafficToken ? { "e2b-traffic-access-token": trafficToken } : {}),
  };
  return new Promise((resolve, reject) => {
    http
      .get({ host: url.hostname, port: Number(url.port), path: "/", headers }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      })
      .on("error", reject);
  });
}

const SERVER_8000 =
  // Returns once the server listens (bash's /dev/tcp probes the port), for at most 30 s.
  'nohup /.sandbox-iac/node -e \'require("http").createServer((q, s) => s.end("ok")).listen(8000)\' >/dev/null 2>&1 & ' +
  "for i in $(seq 300); do (: </dev/tcp/127.0.0.1/8000) 2>/dev/null && break; sleep 0.1; done";

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

/** The fields the tests below cover, one test each: a field added to FORK_INHERITS needs its test. */
const TESTED_FIELDS = [
  "secure",
  "allowInternetAccess",
  "network",
  "autoPause",
  "autoPauseMemory",
  "autoResume",
  "metadata",
  "envVars",
  "volumeMounts",
];

describe("a fork inherits its parent's policy", () => {
  it("covers every field of FORK_INHERITS with a test here", () => {
    expect(Object.keys(FORK_INHERITS).sort()).toEqual([...TESTED_FIELDS].sort());
  });

  it("secure: envd of a fork of a secure sandbox asks for the fork's own access token", async () => {
    const parent = await createSandbox(svc, { secure: true });
    const fork = await forkOf(parent.sandboxID);
    expect(fork.envdAccessToken).toMatch(/^[0-9a-f]{64}$/);
    expect(fork.envdAccessToken).not.toBe(parent.envdAccessToken);
    expect((await runThroughProxy(svc, fork.sandboxID, "true")).status).toBe(401);
    expect(
      (await runThroughProxy(svc, fork.sandboxID, "true", parent.envdAccessToken)).status,
    ).toBe(401);
    const own = await runThroughProxy(svc, fork.sandboxID, "echo in", fork.envdAccessToken);
    expect(own.stdout).toBe("in\n");
  });

  it("network.allowPublicTraffic: a fork's ports answer only with the fork's own traffic token", async () => {
    const res = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      timeout: 300,
      network: { allowPublicTraffic: false },
    });
    const parent = res.body as { sandboxID: string; trafficAccessToken: string };
    const fork = await forkOf(parent.sandboxID);
    expect(fork.trafficAccessToken).toMatch(/^[0-9a-f]{64}$/);
    expect(fork.trafficAccessToken).not.toBe(parent.trafficAccessToken);
    await runThroughProxy(svc, fork.sandboxID, SERVER_8000);
    expect(await getPort8000(fork.sandboxID)).toBe(403);
    expect(await getPort8000(fork.sandboxID, parent.trafficAccessToken)).toBe(403);
    expect(await getPort8000(fork.sandboxID, fork.trafficAccessToken!)).toBe(200);
    expect((await detail(fork.sandboxID)).network).toEqual({ allowPublicTraffic: false });
  });

  it("network: a fork keeps its parent's allowOut and denyOut, in its egress rules", async () => {
    const network = { denyOut: ["198.51.100.0/24"], allowOut: ["192.0.2.7/32"] };
    const parent = await createSandbox(svc, { network });
    expect(await fetchInside(parent.sandboxID, `${inet.url}/parent`)).toBe("failed");
    const fork = await forkOf(parent.sandboxID);
    expect(await fetchInside(fork.sandboxID, `${inet.url}/fork`)).toBe("failed");
    expect((await detail(fork.sandboxID)).network).toEqual(network);
    // The fork's rules are its own: opening the fork leaves the parent closed.
    await call(svc, "PUT", `/sandboxes/${fork.sandboxID}/network`, { denyOut: [] });
    expect(await fetchInside(fork.sandboxID, `${inet.url}/open`, ALLOWED_WITHIN_MS)).toBe(
      "internet /open",
    );
    expect(await fetchInside(parent.sandboxID, `${inet.url}/still`)).toBe("failed");
  });

  it("allowInternetAccess: a fork of a sandbox without internet access has none", async () => {
    const parent = await createSandbox(svc, { allow_internet_access: false });
    const fork = await forkOf(parent.sandboxID);
    expect((await detail(fork.sandboxID)).allowInternetAccess).toBe(false);
    expect(await fetchInside(fork.sandboxID, `${inet.url}/fork`)).toBe("failed");
  });

  it("autoPause: a fork of an auto-pausing sandbox is paused, not killed, at its timeout", async () => {
    const parent = await createSandbox(svc, { autoPause: true });
    const fork = await forkOf(parent.sandboxID, 2);
    expect((await detail(fork.sandboxID)).lifecycle).toMatchObject({ onTimeout: "pause" });
    await eventually(async () => (await detail(fork.sandboxID)).state === "paused", {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    expect((await call(svc, "GET", `/sandboxes/${fork.sandboxID}`)).status).toBe(200);
  });

  it("autoPauseMemory: a fork of a sandbox that auto-pauses filesystem-only loses its processes at its timeout", async () => {
    const parent = await createSandbox(svc, { autoPause: true, autoPauseMemory: false });
    const fork = await forkOf(parent.sandboxID, 15);
    await runThroughProxy(svc, fork.sandboxID, "nohup sleep 1000 >/dev/null 2>&1 &");
    await eventually(async () => (await detail(fork.sandboxID)).state === "paused", {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    const resumed = await call(svc, "POST", `/sandboxes/${fork.sandboxID}/resume`, { timeout: 60 });
    expect(resumed.status).toBe(201);
    // Kept memory would have thawed the sleep; a filesystem-only pause boots the sandbox afresh.
    const ps = await runThroughProxy(svc, fork.sandboxID, "pgrep -x sleep || echo none");
    expect(ps.stdout.trim()).toBe("none");
  });

  it("autoResume: a fork keeps its parent's autoResume", async () => {
    const parent = await createSandbox(svc, { autoResume: { enabled: true } });
    const fork = await forkOf(parent.sandboxID);
    expect((await detail(fork.sandboxID)).lifecycle).toEqual({
      autoResume: true,
      onTimeout: "kill",
    });
  });

  it("metadata: a fork carries its parent's metadata", async () => {
    const parent = await createSandbox(svc, { metadata: { owner: "alice" } });
    const fork = await forkOf(parent.sandboxID);
    expect((await detail(fork.sandboxID)).metadata).toEqual({ owner: "alice" });
  });

  it("envVars: a fork's processes see its parent's variables, and E2B_SANDBOX_ID names the fork", async () => {
    const parent = await createSandbox(svc, { envVars: { FORK_VAR: "carried" } });
    const fork = await forkOf(parent.sandboxID);
    const out = await runThroughProxy(svc, fork.sandboxID, 'echo "$FORK_VAR $E2B_SANDBOX_ID"');
    expect(out.stdout).toBe(`carried ${fork.sandboxID}\n`);
  });

  it("volumeMounts: a fork mounts its parent's volumes at the same paths", async () => {
    const vol = await api.createVolume(`fork-vol-${process.pid}`);
    const parent = await createSandbox(svc, {
      volumeMounts: [{ name: vol.name, path: "/mnt/v" }],
    });
    await runThroughProxy(svc, parent.sandboxID, "echo shared > /mnt/v/f.txt");
    const fork = await forkOf(parent.sandboxID);
    expect((await runThroughProxy(svc, fork.sandboxID, "cat /mnt/v/f.txt")).stdout).toBe(
      "shared\n",
    );
    expect((await detail(fork.sandboxID)).volumeMounts).toEqual([
      { name: vol.name, path: "/mnt/v" },
    ]);
  });
});
