/**
 * `network.egressProxy` (E2B's SOCKS5 "bring your own proxy") and
 * `network.maskRequestHost`, against the stand-in internet with Dante as the
 * user's proxy (stand-in-socks.ts): the edge tunnels each flow the
 * sandbox's rules allow through the proxy with its RFC 1929 credentials (by
 * name for a flow allowed by name: the proxy resolves it), so the stand-in's
 * servers see the proxy's address; wrong credentials fail the flow and say
 * so in the sandbox's log; the password never comes back.
 */
import { randomBytes } from "node:crypto";
import { Sandbox } from "e2b";
import { call } from "../local/support";
import { eventually } from "../support/eventually";
import { SandboxIacError } from "../../src/errors";
import {
  connectionOpts,
  controlClientOf,
  startService,
  type TestService,
} from "../support/service";
import { NAMES, startStandInNames, type StandInNames } from "./stand-in-names";
import { startStandInInternet, type StandIn, STAND_IN_WAIT_MS } from "./stand-in-internet";
import { SOCKS, startStandInSocks, type StandInSocks } from "./stand-in-socks";

jest.setTimeout(240_000);

let inet: StandIn;
let names: StandInNames;
let socks: StandInSocks;
let svc: TestService;
const serviceLog: string[] = [];
/** The proxy's password: the test alone knows it; it must never come back. */
const PASSWORD = `pw-${randomBytes(12).toString("hex")}`;
const SECRET_VALUE = `sk-${randomBytes(12).toString("hex")}`;

beforeAll(async () => {
  inet = await startStandInInternet();
  names = await startStandInNames(inet);
  socks = await startStandInSocks(inet, PASSWORD);
  svc = await startService({
    dnsResolvers: [NAMES.otherAddress],
    edgeUpstreamCa: [names.caPem],
    log: (line) => serviceLog.push(line),
  });
  const made = await call(svc, "POST", "/secrets", { name: "proxy-test-key", value: SECRET_VALUE });
  if (made.status !== 201) throw new Error(`secret not stored: ${JSON.stringify(made.body)}`);
}, STAND_IN_WAIT_MS + 90_000);
afterAll(async () => {
  await svc?.close();
  await socks?.close();
  await names?.close();
  await inet?.close();
});

/**
 * Node inside: GETs each `[proto, name, path, trust?]` (SNI and Host `name`,
 * to the stand-in's address; verified with the stand-in's CA, or with the
 * sandbox's own trust when `trust` is "sandbox": the edge terminates flows
 * with rules), prints the bodies as JSON.
 */
const PROBE_SCRIPT = `
const [probes, ca] = process.argv.slice(1).map((a) => Buffer.from(a, "base64").toString());
const one = ([proto, name, path, trust]) => new Promise((resolve) => {
  const req = require(proto).get({ host: "${NAMES.address}", path, timeout: 8000, ...(trust ? {} : { ca }), servername: name, headers: { host: name } },
    (res) => { let b = ""; res.on("data", (d) => (b += d)); res.on("end", () => resolve(b)); });
  req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
  req.on("error", (e) => resolve("failed " + (e.code || e.message)));
});
Promise.all(JSON.parse(probes).map(one)).then((r) => console.log(JSON.stringify(r)));`;

type Probe = [string, string, string] | [string, string, string, "sandbox"];

async function probe(sbx: Sandbox, probes: Probe[]): Promise<string[]> {
  const arg = (s: string) => Buffer.from(s).toString("base64");
  const cmd = `/.sandbox-iac/node -e '${PROBE_SCRIPT}' ${arg(JSON.stringify(probes))} ${arg(names.caPem)}`;
  const out = await sbx.commands.run(cmd);
  return JSON.parse(out.stdout.trim()) as string[];
}

const DENY_ALL = ["0.0.0.0/0"];

describe("network.egressProxy", () => {
  it("Sandbox.create tunnels the allowed flows through the SOCKS5 proxy with its credentials (names resolved by the proxy, rules applied), and never shows the password", async () => {
    const sbx = await Sandbox.create({
      ...connectionOpts(svc),
      network: {
        allowOut: ["allowed.test", "*.wild.test"],
        denyOut: DENY_ALL,
        rules: {
          "a.wild.test": [
            { transform: { headers: { Authorization: "Bearer ${e2b.secrets.proxy-test-key}" } } },
          ],
        },
        egressProxy: { address: socks.address, username: SOCKS.username, password: PASSWORD },
      },
    });
    try {
      const [tls, plain, terminated, headers, refused] = await probe(sbx, [
        ["https", "allowed.test", "/peer"],
        ["http", "allowed.test", "/peer"],
        ["https", "a.wild.test", "/peer", "sandbox"],
        ["https", "a.wild.test", "/headers", "sandbox"],
        ["https", "other.test", "/peer"],
      ]);
      // The stand-in's servers were reached from the proxy's address, not the host's.
      expect([tls, plain, terminated]).toEqual([SOCKS.address, SOCKS.address, SOCKS.address]);
      expect(JSON.parse(headers) as Record<string, string>).toMatchObject({
        authorization: expect.stringMatching(/^sha256:/) as unknown,
      });
      // Filtering comes first: a name not allowed never reaches the proxy.
      expect(refused).toBe("failed ECONNRESET");
      // The proxy authenticated the user and connected out from its own address.
      expect(socks.log()).toContain(
        `pass(1): tcp/connect [: username%${SOCKS.username}@${STAND_IN_HOST}.`,
      );
      // Remote DNS: the proxy itself asked the resolver for the names it was given (in the
      // stand-in's namespace only Dante resolves names, from the namespace's first address).
      const fromProxy = (name: string) => `query[A] ${name} from ${NAMES.address}`;
      expect(names.dnsLog()).toContain(fromProxy("allowed.test"));
      expect(names.dnsLog()).toContain(fromProxy("a.wild.test"));
      expect(names.dnsLog()).not.toContain(fromProxy("other.test"));

      const info = await sbx.getInfo();
      expect(info.network?.egressProxy).toEqual({
        address: socks.address,
        username: SOCKS.username,
      });
      const raw = await call(svc, "GET", `/sandboxes/${sbx.sandboxId}`);
      const logs = await call(svc, "GET", `/v2/sandboxes/${sbx.sandboxId}/logs`);
      expect(JSON.stringify([raw.body, logs.body, serviceLog])).not.toContain(PASSWORD);

      // PUT /network replaces the whole configuration: without egressProxy, flows go straight out.
      const put = await call(svc, "PUT", `/sandboxes/${sbx.sandboxId}/network`, {
        allowOut: ["allowed.test"],
        denyOut: DENY_ALL,
      });
      expect(put.status).toBe(204);
      expect(await probe(sbx, [["https", "allowed.test", "/peer"]])).toEqual([STAND_IN_HOST]);
    } finally {
      await sbx.kill();
    }
  });

  it("the typed client's updateSandboxNetwork sets the proxy on a running sandbox; getSandbox shows its address and username, never the password", async () => {
    const api = controlClientOf(svc);
    const network = { allowOut: ["allowed.test"], denyOut: DENY_ALL };
    const created = await api.createSandbox({ templateID: "base", timeout: 120, network });
    const sbx = await Sandbox.connect(created.sandboxID, connectionOpts(svc));
    try {
      await api.updateSandboxNetwork(created.sandboxID, {
        ...network,
        egressProxy: { address: socks.address, username: SOCKS.username, password: PASSWORD },
      });
      expect(await probe(sbx, [["https", "allowed.test", "/peer"]])).toEqual([SOCKS.address]);
      const detail = await api.getSandbox(created.sandboxID);
      expect(detail.network?.egressProxy).toEqual({
        address: socks.address,
        username: SOCKS.username,
      });
      // A refused update names the rule it broke, not the password it was given.
      const refused = await api
        .updateSandboxNetwork(created.sandboxID, {
          egressProxy: { address: socks.address, password: PASSWORD },
        })
        .catch((err: unknown) => err);
      expect(SandboxIacError.hasCode(refused, "invalid_argument")).toBe(true);
      expect((refused as Error).message).toContain(
        "egress proxy password must be empty when username is empty",
      );
      expect(JSON.stringify([detail, (refused as Error).message, serviceLog])).not.toContain(
        PASSWORD,
      );
    } finally {
      await sbx.kill();
    }
  });

  it("fails a flow when the proxy refuses the credentials, and the sandbox's log says so without the password", async () => {
    const wrong = `${PASSWORD}-wrong`;
    const sbx = await Sandbox.create({
      ...connectionOpts(svc),
      network: {
        allowOut: ["allowed.test"],
        denyOut: DENY_ALL,
        egressProxy: { address: socks.address, username: SOCKS.username, password: wrong },
      },
    });
    try {
      expect(await probe(sbx, [["https", "allowed.test", "/peer"]])).toEqual(["failed ECONNRESET"]);
      const logs = await call(svc, "GET", `/v2/sandboxes/${sbx.sandboxId}/logs`);
      const text = JSON.stringify(logs.body);
      expect(text).toContain(
        `egress proxy ${socks.address} with the username \\"${SOCKS.username}\\" could not open allowed.test:443`,
      );
      expect(text).toMatch(/refused the credentials \(RFC 1929\)/);
      expect(JSON.stringify([text, serviceLog])).not.toContain(wrong);
    } finally {
      await sbx.kill();
    }
  });

  it("refuses a malformed proxy with E2B's message, never echoing the password", async () => {
    const create = (egressProxy: unknown, extra: Record<string, unknown> = {}) =>
      call(svc, "POST", "/sandboxes", {
        templateID: "base",
        network: { egressProxy, ...extra },
      });
    const noPort = await create({ address: "proxy.example.com" });
    expect(noPort.status).toBe(400);
    expect(JSON.stringify(noPort.body)).toContain(
      "Invalid egress proxy config: egress proxy address must be in host:port form: address proxy.example.com: missing port in address",
    );
    const orphan = await create({ address: socks.address, password: PASSWORD });
    expect(orphan.status).toBe(400);
    expect(JSON.stringify(orphan.body)).toContain(
      "egress proxy password must be empty when username is empty",
    );
    const long = await create({ address: socks.address, username: "u", password: "p".repeat(256) });
    expect(JSON.stringify(long.body)).toContain("egress proxy password must not exceed 255 bytes");
    const badPort = await create({ address: "198.51.100.4:0" });
    expect(JSON.stringify(badPort.body)).toContain(
      'egress proxy port \\"0\\" is not a valid 1-65535 value',
    );
    for (const answer of [orphan, long]) expect(JSON.stringify(answer.body)).not.toContain("ppp");
    expect(JSON.stringify(orphan.body)).not.toContain(PASSWORD);
  });
});

/** The host's address on the stand-in's link: where masqueraded flows come from. */
const STAND_IN_HOST = "198.51.100.1";

describe("network.maskRequestHost", () => {
  it("gives requests to the sandbox's ports the masked Host, ${PORT} replaced", async () => {
    const sbx = await Sandbox.create({
      ...connectionOpts(svc),
      network: { maskRequestHost: "localhost:${PORT}" },
    });
    try {
      await sbx.commands.run(
        `/.sandbox-iac/node -e 'require("http").createServer((q, s) => s.end("host " + q.headers.host)).listen(8000)'`,
        { background: true },
      );
      const body = await eventually(
        async () => {
          const res = await fetch(`${svc.sandboxUrl}/`, {
            headers: { "E2b-Sandbox-Id": sbx.sandboxId, "E2b-Sandbox-Port": "8000" },
          });
          return res.status === 200 ? res.text() : false;
        },
        { timeoutMs: 60_000 },
      );
      expect(body).toBe("host localhost:8000");
      expect((await sbx.getInfo()).network?.maskRequestHost).toBe("localhost:${PORT}");
      const bad = await call(svc, "POST", "/sandboxes", {
        templateID: "base",
        network: { maskRequestHost: "bäd.example:${PORT}" },
      });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain(
        "mask request host 'bäd.example' is not ASCII. Please use ASCII characters only.",
      );
    } finally {
      await sbx.kill();
    }
  });
});
