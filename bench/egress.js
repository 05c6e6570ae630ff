// npm run bench:egress — what the egress edge adds to a sandbox's HTTPS
// (issue 21): the same requests from a sandbox with no rules (NATed straight
// out, the baseline), from one whose deny-all plus domain allow-list sends
// every new connection through the edge (SNI read, name resolved, relayed:
// "pass-through"), and from one that also has a `network.rules` header for
// the name, so the edge terminates its TLS, adds the header and makes its own
// verified HTTPS request upstream ("terminated"). Besides the latencies, the
// service's CPU time per request (this process runs the service), less the
// same figure with no edge in the path: what the edge itself costs, which
// load on the machine does not inflate as it does wall times.
// The "internet" is a network namespace made here on TEST-NET-3 with
// dnsmasq and an HTTPS server; nothing leaves the machine.
"use strict";
const { execFileSync, spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { Sandbox } = require("e2b");
const { startLocalService } = require("../dist/local");
const { agentBundleDirOnHost } = require("../dist/local/agent-launch");

const REQUESTS = Number(process.env.BENCH_EGRESS_REQUESTS ?? 300);
const NS = `sbxbench-egress-${process.pid}`;
const VETH = `egbench${process.pid % 10000}`;
const SERVER = "203.0.113.2";
const RESOLVER = "203.0.113.3";

/** The stand-in: namespace, link, dnsmasq (bench.test -> SERVER) and an HTTPS server. */
async function standIn(dir) {
  const ip = (...a) => execFileSync("ip", a, { stdio: "pipe" });
  const ssl = (...a) => execFileSync("openssl", a, { cwd: dir, stdio: "pipe" });
  ssl(
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=bench.test",
    "-addext",
    "subjectAltName=DNS:bench.test",
    "-keyout",
    "key.pem",
    "-out",
    "cert.pem",
  );
  ip("netns", "add", NS);
  ip("link", "add", VETH, "type", "veth", "peer", "name", "eth0", "netns", NS);
  ip("addr", "add", "203.0.113.1/24", "dev", VETH);
  ip("link", "set", VETH, "up");
  ip("-n", NS, "addr", "add", `${SERVER}/24`, "dev", "eth0");
  ip("-n", NS, "addr", "add", `${RESOLVER}/24`, "dev", "eth0");
  ip("-n", NS, "link", "set", "eth0", "up");
  ip("-n", NS, "link", "set", "lo", "up");
  const dns = spawn(
    "ip",
    [
      "netns",
      "exec",
      NS,
      "dnsmasq",
      "--keep-in-foreground",
      "--no-resolv",
      "--no-hosts",
      "--bind-interfaces",
      `--listen-address=${RESOLVER}`,
      "--pid-file=",
      `--address=/bench.test/${SERVER}`,
      "--local-ttl=300",
    ],
    { stdio: "ignore" },
  );
  const code = `require("https").createServer({ key: require("fs").readFileSync("${dir}/key.pem"), cert: require("fs").readFileSync("${dir}/cert.pem") }, (q, s) => s.end("ok")).listen(443, "${SERVER}", () => console.log("up"))`;
  const https = spawn("ip", ["netns", "exec", NS, process.execPath, "-e", code], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise((resolve) => https.stdout.once("data", resolve));
  return () => {
    dns.kill("SIGKILL");
    https.kill("SIGKILL");
    try {
      ip("link", "del", VETH);
    } catch {
      /* gone with the namespace */
    }
    try {
      ip("netns", "del", NS);
    } catch {
      /* already gone */
    }
  };
}

const CONCURRENCY = Number(process.env.BENCH_EGRESS_CONCURRENCY ?? 8);

/**
 * Node inside: REQUESTS sequential GETs, each on a new connection ("fresh"),
 * as many on one kept-alive connection ("kept"), then as many again on new
 * connections from CONCURRENCY loops at once ("load"). A `mark <phase>` line
 * starts each phase, so that the service's CPU time can be read at its edges.
 */
const CLIENT = `
const https = require("https");
const get = (agent) => new Promise((resolve, reject) => {
  const t = process.hrtime.bigint();
  https.get({ host: "${SERVER}", servername: "bench.test", headers: { host: "bench.test" }, rejectUnauthorized: false, agent },
    (r) => { r.resume(); r.on("end", () => resolve(Number(process.hrtime.bigint() - t) / 1e6)); }).on("error", reject);
});
const p50 = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
const mark = (phase) => new Promise((resolve) => process.stdout.write("mark " + phase + "\\n", () => setTimeout(resolve, 200)));
(async () => {
  const fresh = [], kept = [], load = [];
  const keep = new https.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < 20; i++) await get(false);
  await mark("fresh");
  for (let i = 0; i < ${REQUESTS}; i++) fresh.push(await get(false));
  await mark("kept");
  for (let i = 0; i < ${REQUESTS}; i++) kept.push(await get(keep));
  await mark("load");
  const t0 = process.hrtime.bigint();
  let left = ${REQUESTS};
  const loop = async () => { while (left-- > 0) load.push(await get(false)); };
  await Promise.all(Array.from({ length: ${CONCURRENCY} }, loop));
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  await mark("end");
  console.log(JSON.stringify({ fresh: p50(fresh), kept: p50(kept), fresh90: fresh.sort((x, y) => x - y)[Math.floor(fresh.length * 0.9)], load: p50(load), loadRate: ${REQUESTS} / (loadMs / 1000) }));
})();`;

/** CPU seconds (user + system) of a `process.cpuUsage()` delta. */
const cpuOf = (d) => (d.user + d.system) / 1e6;

/**
 * Runs CLIENT in a new sandbox with `network`; adds the service's CPU time
 * (this process: the service runs in it) per request of each phase, in µs.
 */
async function measure(opts, network) {
  const sbx = await Sandbox.create({
    ...opts,
    timeoutMs: 600_000,
    ...(network ? { network } : {}),
  });
  const marks = new Map();
  try {
    const run = await sbx.commands.run(`/.sandbox-iac/node -e '${CLIENT}'`, {
      timeoutMs: 600_000,
      onStdout: (data) => {
        for (const m of data.matchAll(/^mark (\w+)$/gm))
          marks.set(m[1], { cpu: process.cpuUsage(), at: performance.now() });
      },
    });
    const out = JSON.parse(run.stdout.trim().split("\n").pop());
    /** The service's CPU seconds and the wall seconds of one phase. */
    const phase = (from, to) => {
      const [a, b] = [marks.get(from), marks.get(to)];
      const cpu = cpuOf({ user: b.cpu.user - a.cpu.user, system: b.cpu.system - a.cpu.system });
      return { cpu, wall: (b.at - a.at) / 1000 };
    };
    return {
      ...out,
      phases: {
        fresh: phase("fresh", "kept"),
        kept: phase("kept", "load"),
        load: phase("load", "end"),
      },
    };
  } finally {
    await sbx.kill();
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-egress-"));
  const close = await standIn(dir);
  const svc = await startLocalService({
    port: 0,
    dataDir: path.join(dir, "data"),
    agentBundleDir: agentBundleDirOnHost(),
    dnsResolvers: [RESOLVER],
    // The bench server's self-signed certificate, which the edge verifies upstream.
    edgeUpstreamCa: [fs.readFileSync(path.join(dir, "cert.pem"), "utf8")],
  });
  try {
    const opts = { apiKey: svc.apiKey, apiUrl: svc.apiUrl, sandboxUrl: svc.sandboxUrl };
    const direct = await measure(opts);
    const allowList = { allowOut: ["bench.test"], denyOut: ["0.0.0.0/0"] };
    const edge = await measure(opts, allowList);
    const terminated = await measure(opts, {
      ...allowList,
      rules: { "bench.test": [{ transform: { headers: { "X-Bench": "1" } } }] },
    });
    const f = (n) => `${n.toFixed(2)} ms`;
    const us = (n) => `${n.toFixed(0)} µs`;
    // The service burns CPU at a steady rate whatever the requests (metrics sampling, the
    // command's stream): measured over the direct run, where no request touches it, and
    // taken off each phase by its length, what is left per request is the edge's.
    const all = Object.values(direct.phases);
    const floorRate = all.reduce((n, p) => n + p.cpu, 0) / all.reduce((n, p) => n + p.wall, 0);
    const edgeCpu = (m, name) =>
      (Math.max(0, m.phases[name].cpu - floorRate * m.phases[name].wall) * 1e6) / REQUESTS;
    console.log(
      `egress edge, ${REQUESTS} HTTPS GETs each, p50 (${os.cpus().length} cores, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")})`,
    );
    console.log(
      `service CPU floor (direct run, no edge in the path): ${(floorRate * 1000).toFixed(1)} ms per second; ` +
        `direct, ${CONCURRENCY} at once: ${direct.loadRate.toFixed(0)} req/s, p50 ${f(direct.load)}`,
    );
    for (const [what, m] of [
      ["pass-through", edge],
      ["terminated (rule)", terminated],
    ]) {
      console.log(
        `${what}, new connection: direct ${f(direct.fresh)}, through the edge ${f(m.fresh)}, added ${f(m.fresh - direct.fresh)} (p90 ${f(direct.fresh90)} / ${f(m.fresh90)}); ` +
          `edge CPU ${us(edgeCpu(m, "fresh"))} per request`,
      );
      console.log(
        `${what}, kept-alive connection: direct ${f(direct.kept)}, through the edge ${f(m.kept)}, added ${f(m.kept - direct.kept)}; ` +
          `edge CPU ${us(edgeCpu(m, "kept"))} per request`,
      );
      console.log(
        `${what}, ${CONCURRENCY} new connections at once: ${m.loadRate.toFixed(0)} req/s (direct ${direct.loadRate.toFixed(0)}), ` +
          `p50 ${f(m.load)} (direct ${f(direct.load)}); edge CPU ${us(edgeCpu(m, "load"))} per request`,
      );
    }
  } finally {
    await svc.close();
    close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
