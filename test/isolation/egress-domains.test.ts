/**
 * Domain allow-lists (`network.allowOut` with names, E2B's usual
 * `denyOut: ["0.0.0.0/0"]` pattern), enforced by the service's egress edge
 * for the sandbox's outbound TCP: against the stand-in internet, whose
 * dnsmasq answers the test names for the service, and whose HTTP and HTTPS
 * servers answer `<proto> <Host> <path>`. Probes run inside the sandbox
 * and connect to explicit addresses, so each case picks the name (SNI, Host)
 * and the address apart. `network.rules` are checked against the same
 * servers, whose `/headers` answer shows what they received.
 */
import { createHash, randomBytes } from "node:crypto";
import { Sandbox, Secret } from "e2b";
import { call, createSandbox, runThroughProxy } from "../local/support";
import { connectionOpts, startService, type TestService } from "../support/service";
import { NAMES, startStandInNames, type StandInNames } from "./stand-in-names";
import { startStandInInternet, type StandIn, STAND_IN_WAIT_MS } from "./stand-in-internet";

jest.setTimeout(240_000);

let inet: StandIn;
let names: StandInNames;
let svc: TestService;
/** The stored secret `stand-in-key` that rules inject; the test alone knows it. */
const SECRET_VALUE = `sk-stand-in-${randomBytes(16).toString("hex")}`;
const sha = (v: string) => `sha256:${createHash("sha256").update(v).digest("hex")}`;

beforeAll(async () => {
  inet = await startStandInInternet();
  names = await startStandInNames(inet);
  // The stand-in's dnsmasq is the service's resolver: the host's real ones are never asked.
  // The edge verifies the stand-in's certificates (signed by its test CA) when it terminates TLS.
  svc = await startService({ dnsResolvers: [NAMES.otherAddress], edgeUpstreamCa: [names.caPem] });
  const made = await call(svc, "POST", "/secrets", { name: "stand-in-key", value: SECRET_VALUE });
  if (made.status !== 201) throw new Error(`secret not stored: ${JSON.stringify(made.body)}`);
}, STAND_IN_WAIT_MS + 90_000);
afterAll(async () => {
  await svc?.close();
  await names?.close();
  await inet?.close();
});

/**
 * One request from inside: `name` as SNI (https) and Host, sent to `ip`; no
 * name: the bare address. `trust: "sandbox"` verifies with the sandbox's own
 * trust (its `NODE_EXTRA_CA_CERTS`), else with the stand-in's CA only.
 */
interface Probe {
  proto: "http" | "https";
  ip: string;
  name?: string;
  path?: string;
  trust?: "sandbox";
}

/** Node inside the sandbox: runs the probes at once, prints `[body | "<status> <body>" | "failed <code>"]` as JSON. */
const PROBE_SCRIPT = `
const [probes, ca] = process.argv.slice(1).map((a) => Buffer.from(a, "base64").toString());
const one = (p) => new Promise((resolve) => {
  const mod = require(p.proto);
  const req = mod.get({ host: p.ip, path: p.path || "/", timeout: 8000, ...(p.trust ? {} : { ca }),
    headers: { host: p.name || p.ip, "x-sent": "client" }, ...(p.proto === "https" && p.name ? { servername: p.name } : {}) },
    (res) => { let b = ""; res.on("data", (d) => (b += d));
      res.on("end", () => resolve(res.statusCode === 200 ? b : res.statusCode + " " + b)); });
  req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
  req.on("error", (e) => resolve("failed " + (e.code || e.message)));
});
Promise.all(JSON.parse(probes).map(one)).then((r) => console.log(JSON.stringify(r)));`;

function probeCommand(probes: Probe[]): string {
  const arg = (s: string) => Buffer.from(s).toString("base64");
  return `/.sandbox-iac/node -e '${PROBE_SCRIPT}' ${arg(JSON.stringify(probes))} ${arg(names.caPem)}`;
}

/** The probes' answers, through the service's proxy. */
async function probe(sandboxID: string, probes: Probe[]): Promise<string[]> {
  const out = await runThroughProxy(svc, sandboxID, probeCommand(probes));
  return JSON.parse(out.stdout.trim()) as string[];
}

const A = NAMES.address;
const B = NAMES.otherAddress;
const DENY_ALL = ["0.0.0.0/0"];

describe("deny-all plus a domain allow-list", () => {
  it("lets an allowed name through by SNI or Host, and refuses another name, a bare address, an address the name does not resolve to, and a wildcard's apex", async () => {
    const { sandboxID } = await createSandbox(svc, {
      network: { allowOut: ["Allowed.TEST", "*.wild.test"], denyOut: DENY_ALL },
    });
    const results = await probe(sandboxID, [
      { proto: "https", ip: A, name: "allowed.test", path: "/tls" },
      { proto: "http", ip: A, name: "allowed.test", path: "/plain" },
      { proto: "https", ip: A, name: "a.wild.test" },
      { proto: "http", ip: A, name: "x.y.wild.test" },
      // The same address under names not allowed, or none:
      { proto: "https", ip: A, name: "other.test" },
      { proto: "http", ip: A, name: "other.test" },
      { proto: "https", ip: A },
      { proto: "http", ip: A },
      { proto: "https", ip: A, name: "wild.test" },
      // An allowed name sent to an address it does not resolve to:
      { proto: "https", ip: B, name: "allowed.test" },
    ]);
    expect(results.slice(0, 4)).toEqual([
      "https allowed.test /tls",
      "http allowed.test /plain",
      "https a.wild.test /",
      "http x.y.wild.test /",
    ]);
    for (const refused of results.slice(4)) expect(refused).toBe("failed ECONNRESET");
    // E2B stores domain entries lower-cased.
    const info = await call(svc, "GET", `/sandboxes/${sandboxID}`);
    expect((info.body as { network?: { allowOut?: string[] } }).network?.allowOut).toEqual([
      "allowed.test",
      "*.wild.test",
    ]);
  });

  it("PUT /sandboxes/:id/network replaces the list: the old name is refused, the new one passes", async () => {
    const { sandboxID } = await createSandbox(svc, {
      network: { allowOut: ["allowed.test"], denyOut: DENY_ALL },
    });
    const put = await call(svc, "PUT", `/sandboxes/${sandboxID}/network`, {
      allowOut: ["other.test"],
      denyOut: DENY_ALL,
    });
    expect(put.status).toBe(204);
    expect(
      await probe(sandboxID, [
        { proto: "https", ip: A, name: "allowed.test" },
        { proto: "https", ip: A, name: "other.test" },
      ]),
    ).toEqual(["failed ECONNRESET", "https other.test /"]);
  });

  it("refuses a domain in denyOut and a malformed entry in allowOut, saying what is allowed", async () => {
    const deny = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      network: { denyOut: ["example.com"] },
    });
    expect(deny.status).toBe(400);
    expect(JSON.stringify(deny.body)).toMatch(/domain names are not supported in denyOut/);
    const wildcard = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      network: { allowOut: ["a.*.example.com"] },
    });
    expect(wildcard.status).toBe(400);
    expect(JSON.stringify(wildcard.body)).toContain("a.*.example.com");
  });
});

describe("hostile flows to the edge", () => {
  /**
   * Node inside: flows the edge must end on its own (oversized or garbage
   * first bytes, a request head sent one byte at a time), each reported as
   * `closed` once the edge ends it; and, while the slow one is still open,
   * an allowed request, which must pass.
   */
  const HOSTILE = `
const net = require("net"), https = require("https");
const ca = Buffer.from(process.argv[1], "base64").toString();
const flow = (first, more, everyMs) => new Promise((resolve) => {
  const s = net.connect(443, "${A}");
  let timer;
  const end = (how) => { clearInterval(timer); resolve(how); };
  s.on("error", () => end("closed")); s.on("close", () => end("closed"));
  s.on("data", () => end("answered"));
  s.write(first);
  if (more) timer = setInterval(() => s.write(more), everyMs);
});
const garbage = Buffer.concat([Buffer.from([0x16, 3, 1, 0xff, 0xff]), require("crypto").randomBytes(4096)]);
const slow = flow("GET / HTTP/1.1\\r\\nHost: allowed.te", "s", 500);
Promise.all([
  flow(garbage, garbage, 5),
  flow(Buffer.from("GET / HTTP/1.1\\r\\nX: " + "a".repeat(64 * 1024)), null),
  flow(Buffer.from([0, 1, 2, 3, 0xff]), null),
  new Promise((resolve) => https.get({ host: "${A}", servername: "allowed.test", headers: { host: "allowed.test" }, ca },
    (r) => { let b = ""; r.on("data", (d) => (b += d)); r.on("end", () => resolve(b)); }).on("error", (e) => resolve("failed " + e.code))),
  slow,
]).then((r) => console.log(JSON.stringify(r)));`;

  it("ends oversized, garbage and slow first bytes on its own, and serves an allowed flow meanwhile", async () => {
    const { sandboxID } = await createSandbox(svc, {
      network: { allowOut: ["allowed.test"], denyOut: DENY_ALL },
    });
    const ca = Buffer.from(names.caPem).toString("base64");
    const out = await runThroughProxy(svc, sandboxID, `/.sandbox-iac/node -e '${HOSTILE}' ${ca}`);
    expect(JSON.parse(out.stdout.trim())).toEqual([
      "closed",
      "closed",
      "closed",
      "https allowed.test /",
      "closed",
    ]);
    // The service still answers, and the edge still lets the allowed name through.
    expect(await probe(sandboxID, [{ proto: "https", ip: A, name: "allowed.test" }])).toEqual([
      "https allowed.test /",
    ]);
  });
});

/**
 * Python inside: the first argument reversed is the value looked for (so the
 * value is in neither this process's command line nor its environment);
 * prints every file under the given roots, and every process's `environ` and
 * `cmdline`, that holds it.
 */
const FIND_VALUE = `
import os, sys
value = sys.argv[1][::-1].encode()
hits = []
def check(path):
    try:
        with open(path, "rb") as f: data = f.read(4 << 20)
    except OSError: return
    if value in data: hits.append(path)
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("environ", "cmdline"): check("/proc/%s/%s" % (pid, part))
for root in sys.argv[2:]:
    for d, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p): check(p)
print(repr(hits))`;

/** Where the scan looks: everything written at run time (not /usr, the host's, nor /proc, /sys, /dev). */
const SCANNED = ["/etc", "/home", "/root", "/tmp", "/var", "/run", "/opt", "/mnt", "/.sandbox-iac"];

/** The `/headers` answer of a probe. */
function headersOf(answer: string | undefined): Record<string, string> {
  return JSON.parse(answer ?? "{}") as Record<string, string>;
}

describe("network.rules at the edge", () => {
  let sandboxID: string;

  beforeAll(async () => {
    ({ sandboxID } = await createSandbox(svc, {
      network: {
        allowOut: ["allowed.test", "*.wild.test"],
        denyOut: DENY_ALL,
        rules: {
          "Allowed.TEST": [
            { transform: { headers: { Authorization: "Bearer ${e2b.secrets.stand-in-key}" } } },
            { transform: { headers: { "X-Sent": "rule" } } },
          ],
          "a.wild.test": [{ transform: { headers: { "X-Rule": "exact" } } }],
          "*.wild.test": [{ transform: { headers: { "X-Key": "${e2b.secrets.no-such-secret}" } } }],
          // Not in allowOut: the rule must not open it.
          "other.test": [{ transform: { headers: { "X-Rule": "other" } } }],
        },
      },
    }));
  });

  it("injects the secret into HTTPS and HTTP requests to the rule's domain, replacing a header the client sent, exact key before wildcard; refuses an unknown secret with a 502 and a log line; a rule grants no access", async () => {
    const results = await probe(sandboxID, [
      { proto: "https", ip: A, name: "allowed.test", path: "/headers", trust: "sandbox" },
      { proto: "http", ip: A, name: "allowed.test", path: "/headers" },
      { proto: "https", ip: A, name: "a.wild.test", path: "/headers", trust: "sandbox" },
      { proto: "https", ip: A, name: "b.wild.test", path: "/headers", trust: "sandbox" },
      { proto: "https", ip: A, name: "other.test", path: "/headers", trust: "sandbox" },
    ]);
    const [tlsSeen, plainSeen, exact] = results.slice(0, 3).map(headersOf);
    for (const seen of [tlsSeen, plainSeen]) {
      expect(seen.authorization).toBe(sha(`Bearer ${SECRET_VALUE}`));
      expect(seen["x-sent"]).toBe("rule");
    }
    expect(exact["x-rule"]).toBe("exact");
    expect(exact["x-key"]).toBeUndefined();
    expect(results[3]).toMatch(
      /^502 sandbox-iac egress edge: .*"no-such-secret", which does not exist/,
    );
    expect(results[4]).toBe("failed ECONNRESET");
    const logs = await call(svc, "GET", `/v2/sandboxes/${sandboxID}/logs`);
    expect(JSON.stringify(logs.body)).toMatch(/b\.wild\.test was refused.*no-such-secret/);
    // curl with none of the variables set trusts the edge by the system store alone.
    const curl = await runThroughProxy(
      svc,
      sandboxID,
      `env -u SSL_CERT_FILE -u CURL_CA_BUNDLE curl -sS --resolve allowed.test:443:${A} https://allowed.test/headers`,
    );
    expect(headersOf(curl.stdout).authorization).toBe(sha(`Bearer ${SECRET_VALUE}`));
  });

  it("never lets the value into the sandbox (environment, /proc, files, agent), its info or its logs", async () => {
    const reversed = [...SECRET_VALUE].reverse().join("");
    const out = await runThroughProxy(
      svc,
      sandboxID,
      `python3 -c '${FIND_VALUE}' ${reversed} ${SCANNED.join(" ")}; env | grep -c SSL_CERT_FILE`,
    );
    expect(out.stdout.trim().split("\n")).toEqual(["[]", "1"]);
    const info = await call(svc, "GET", `/sandboxes/${sandboxID}`);
    const logs = await call(svc, "GET", `/v2/sandboxes/${sandboxID}/logs`);
    expect(JSON.stringify([info.body, logs.body])).not.toContain(SECRET_VALUE);
    expect(JSON.stringify(info.body)).toContain("${e2b.secrets.stand-in-key}");
  });

  it("PUT /sandboxes/:id/network replaces the rules: the old headers are gone, the new ones sent", async () => {
    const put = await call(svc, "PUT", `/sandboxes/${sandboxID}/network`, {
      allowOut: ["allowed.test", "*.wild.test"],
      denyOut: DENY_ALL,
      rules: { "allowed.test": [{ transform: { headers: { "X-Sent": "second" } } }] },
    });
    expect(put.status).toBe(204);
    const [allowed, wild] = (
      await probe(sandboxID, [
        { proto: "https", ip: A, name: "allowed.test", path: "/headers", trust: "sandbox" },
        // No rule any more: passed through, so the stand-in's own certificate is seen.
        { proto: "https", ip: A, name: "b.wild.test", path: "/headers" },
      ])
    ).map(headersOf);
    expect(allowed.authorization).toBeUndefined();
    expect(allowed["x-sent"]).toBe("second");
    expect(wild["x-sent"]).toBe("client");
  });

  it("refuses a rule key that is not a domain entry and a placeholder other than a secret, saying what is allowed", async () => {
    const key = await call(svc, "PUT", `/sandboxes/${sandboxID}/network`, {
      rules: { "10.0.0.0/8": [] },
    });
    expect(key.status).toBe(400);
    expect(JSON.stringify(key.body)).toMatch(/rules key must be a DNS name/);
    const iam = await call(svc, "POST", "/sandboxes", {
      templateID: "base",
      network: {
        rules: { "a.test": [{ transform: { headers: { A: "${e2b.identity.tokens.aws}" } } }] },
      },
    });
    expect(iam.status).toBe(400);
    expect(JSON.stringify(iam.body)).toMatch(/only \$\{e2b\.secrets\.NAME\}/);
  });
});

describe("the official SDK (e2b@2.51.0)", () => {
  it("Sandbox.create({ network: { allowOut: rule keys, denyOut: [allTraffic], rules } }) reaches the name only, with the secret injected", async () => {
    const sbx = await Sandbox.create({
      ...connectionOpts(svc),
      timeoutMs: 120_000,
      network: {
        allowOut: ({ rules }) => [...rules.keys()],
        denyOut: ({ allTraffic }) => [allTraffic],
        rules: {
          "allowed.test": [
            { transform: { headers: { Authorization: `key ${Secret.fill("stand-in-key")}` } } },
          ],
        },
      },
    });
    try {
      const run = await sbx.commands.run(
        probeCommand([
          { proto: "https", ip: A, name: "allowed.test", path: "/headers", trust: "sandbox" },
          { proto: "https", ip: A, name: "other.test" },
        ]),
      );
      const [seen, other] = JSON.parse(run.stdout.trim()) as string[];
      expect(headersOf(seen).authorization).toBe(sha(`key ${SECRET_VALUE}`));
      expect(other).toBe("failed ECONNRESET");
    } finally {
      await sbx.kill();
    }
  });
});
