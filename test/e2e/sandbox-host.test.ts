/**
 * `sandbox.getHost(port)` from this machine, with nothing but the variables
 * of `sandbox-iac serve`'s ready line: it is `<port>-<sandboxID>.localhost:<servicePort>`,
 * which the service routes by Host, so `fetch("http://" + getHost(8000))`
 * reaches the sandbox's port 8000. glibc resolves `*.localhost` only through
 * nss-myhostname or systemd-resolved (curl and browsers resolve it
 * themselves); this test stands in for them with dnsmasq answering
 * `*.localhost` with 127.0.0.1, in the client's own mount namespace, so the
 * host's resolver is never changed.
 */
import * as path from "node:path";
import { startPrivateResolver, type PrivateResolver } from "../support/private-resolver";
import { startServiceProcess, type ServiceProcess } from "../support/service";

const ROOT = path.resolve(__dirname, "..", "..");

jest.setTimeout(180_000);

/** Run by the official SDK with the ready line's environment. */
const SDK_SCRIPT = `
const { Sandbox } = require("e2b");
(async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120000 });
  try {
    // Returns once the server listens (bash's /dev/tcp probes the port), for at most 30 s.
    await sbx.commands.run(
      "nohup /.sandbox-iac/node -e 'require(\\"http\\").createServer((q, s) => s.end(\\"port 8000 \\" + q.url)).listen(8000)' >/dev/null 2>&1 & " +
        "for i in $(seq 300); do (: </dev/tcp/127.0.0.1/8000) 2>/dev/null && break; sleep 0.1; done",
    );
    const host = sbx.getHost(8000);
    const res = await fetch("http://" + host + "/hello");
    console.log(JSON.stringify({ id: sbx.sandboxId, host, status: res.status, body: await res.text() }));
  } finally {
    await sbx.kill();
  }
})().catch((err) => { console.error(err); process.exit(1); });
`;

describe("getHost(port) with the ready line's environment", () => {
  let svc: ServiceProcess;
  let resolver: PrivateResolver;

  beforeAll(async () => {
    resolver = await startPrivateResolver({ localhost: "127.0.0.1" });
    svc = await startServiceProcess();
  }, 120_000);

  afterAll(async () => {
    await svc?.close();
    resolver?.close();
  });

  it("gives <port>-<id>.localhost:<service port>, which fetch reaches over plain HTTP", async () => {
    const servicePort = new URL(svc.apiUrl).port;
    const readyEnv = Object.fromEntries(
      [...svc.readyLine.matchAll(/\b(E2B_[A-Z_]+)=(\S+)/g)].map((m) => [m[1], m[2]]),
    );
    expect(readyEnv.E2B_DOMAIN).toBe(`localhost:${servicePort}`);
    const run = await resolver.run(
      process.execPath,
      ["-e", SDK_SCRIPT],
      { PATH: process.env.PATH ?? "/usr/bin:/bin", ...readyEnv },
      ROOT,
    );
    expect(run.stderr).toBe("");
    const out = JSON.parse(run.stdout) as { id: string };
    expect(out).toEqual({
      id: out.id,
      host: `8000-${out.id}.localhost:${servicePort}`,
      status: 200,
      body: "port 8000 /hello",
    });
  });
});
