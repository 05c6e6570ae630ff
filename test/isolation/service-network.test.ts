import * as http from "node:http";
import { call, createSandbox, runThroughProxy } from "../local/support";
import {
  ALLOWED_WITHIN_MS,
  BLOCKED_AFTER_MS,
  fetchProgram,
  startStandInInternet,
  type StandIn,
  STAND_IN_WAIT_MS,
} from "./stand-in-internet";
import { startService, type TestService } from "../support/service";

jest.setTimeout(180_000);

let svc: TestService;
let inet: StandIn;

beforeAll(async () => {
  inet = await startStandInInternet();
  svc = await startService();
}, STAND_IN_WAIT_MS + 60_000);
afterAll(async () => {
  await svc?.close();
  await inet?.close();
});

/** GET `path` on the service port with `headers` (Host included), as a raw HTTP/1.1 client. */
function get(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const url = new URL(svc.sandboxUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: Number(url.port), path, method: "GET", headers },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const SERVER_8000 =
  // Returns once the server listens (bash's /dev/tcp probes the port), for at most 30 s.
  'nohup /.sandbox-iac/node -e \'require("http").createServer((q, s) => s.end("port 8000 " + q.url)).listen(8000)\' >/dev/null 2>&1 & ' +
  "for i in $(seq 300); do (: </dev/tcp/127.0.0.1/8000) 2>/dev/null && break; sleep 0.1; done";

/** Fetches `url` inside the sandbox through the proxy; prints the body or `failed` (see fetchProgram). */
async function fetchInside(
  sandboxID: string,
  url: string,
  timeoutMs = BLOCKED_AFTER_MS,
): Promise<string> {
  const code = fetchProgram(url, timeoutMs);
  return (await runThroughProxy(svc, sandboxID, `/.sandbox-iac/node -e '${code}'`)).stdout.trim();
}

describe("sandbox ports through the proxy", () => {
  it("reaches a server on port 8000 by E2b-Sandbox-Port header and by <port>-<id> Host, and answers 502 for a closed port", async () => {
    const { sandboxID } = await createSandbox(svc);
    expect((await runThroughProxy(svc, sandboxID, SERVER_8000)).exitCode).toBe(0);
    const byHeader = await get("/a", { "E2b-Sandbox-Id": sandboxID, "E2b-Sandbox-Port": "8000" });
    expect(byHeader).toEqual({ status: 200, body: "port 8000 /a" });
    const byHost = await get("/b", { Host: `8000-${sandboxID}.${svc.domain}` });
    expect(byHost).toEqual({ status: 200, body: "port 8000 /b" });
    const closed = await get("/", { "E2b-Sandbox-Id": sandboxID, "E2b-Sandbox-Port": "8001" });
    expect(closed.status).toBe(502);
    expect(JSON.parse(closed.body)).toMatchObject({ sandboxId: sandboxID, port: 8001, code: 502 });
  });

  it("requires the trafficAccessToken when allowPublicTraffic is false", async () => {
    const res = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      timeout: 300,
      network: { allowPublicTraffic: false },
    });
    expect(res.status).toBe(201);
    const { sandboxID, trafficAccessToken } = res.body as {
      sandboxID: string;
      trafficAccessToken: string;
    };
    expect(trafficAccessToken).toMatch(/^[0-9a-f]{64}$/);
    await runThroughProxy(svc, sandboxID, SERVER_8000);
    const route = { "E2b-Sandbox-Id": sandboxID, "E2b-Sandbox-Port": "8000" };
    const without = await get("/", route);
    expect(without.status).toBe(403);
    expect(without.body).toContain("E2b-Traffic-Access-Token");
    const wrong = await get("/", { ...route, "e2b-traffic-access-token": "0".repeat(64) });
    expect(wrong.status).toBe(403);
    const right = await get("/t", { ...route, "e2b-traffic-access-token": trafficAccessToken });
    expect(right).toEqual({ status: 200, body: "port 8000 /t" });
  });
});

describe("network rules through the API", () => {
  it("applies network.denyOut from the create body and PUT /sandboxes/:id/network changes it live", async () => {
    const { sandboxID } = await createSandbox(svc, { network: { denyOut: ["0.0.0.0/0"] } });
    expect(await fetchInside(sandboxID, `${inet.url}/x`)).toBe("failed");
    const put = await call(svc, "PUT", `/sandboxes/${sandboxID}/network`, {
      allowOut: ["198.51.100.2/32"],
      denyOut: ["0.0.0.0/0"],
    });
    expect(put.status).toBe(204);
    expect(await fetchInside(sandboxID, `${inet.url}/y`, ALLOWED_WITHIN_MS)).toBe("internet /y");
  });

  it("refuses entries that are neither CIDR blocks nor domain names, and unknown sandboxes, with clear errors", async () => {
    const bad = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      network: { allowOut: ["exa mple.com"] },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/network\.allowOut\.0.*IPv4 address or CIDR block/);
    const { sandboxID } = await createSandbox(svc);
    const badPut = await call(svc, "PUT", `/sandboxes/${sandboxID}/network`, {
      denyOut: ["10.0.0.0/33"],
    });
    expect(badPut.status).toBe(400);
    expect(JSON.stringify(badPut.body)).toContain("10.0.0.0/33");
    const wrongShape = await call(svc, "PUT", `/sandboxes/${sandboxID}/network`, {
      egressProxy: { url: "http://proxy" },
    });
    expect(wrongShape.status).toBe(400);
    expect(JSON.stringify(wrongShape.body)).toContain("body.egressProxy.address must be a string");
    const missing = await call(svc, "PUT", `/sandboxes/nosuchsandbox0/network`, { denyOut: [] });
    expect(missing.status).toBe(404);
  });
});
