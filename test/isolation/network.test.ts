import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { openEdgeCa } from "../../src/local/edge/edge-ca";
import { NFT_TABLE_PREFIX } from "../../src/local/runtime/constants";
import {
  newTableName,
  setUpHostNetwork,
  tearDownHostNetwork,
} from "../../src/local/runtime/network";
import { createTestRuntime, runInSandbox, sandboxSpec, type TestRuntime } from "../support/runtime";
import type { RuntimeSandbox, SandboxSpec } from "../../src/local/runtime/types";
import { eventually } from "../support/eventually";
import {
  STAND_IN,
  startStandInInternet,
  type StandIn,
  STAND_IN_WAIT_MS,
} from "./stand-in-internet";

jest.setTimeout(120_000);

let t: TestRuntime;
let inet: StandIn;
const started: RuntimeSandbox[] = [];

async function start(sandboxID: string, overrides: Partial<SandboxSpec> = {}) {
  const sbx = await t.runtime.start(sandboxSpec(t, sandboxID, overrides));
  started.push(sbx);
  return sbx;
}

beforeAll(async () => {
  inet = await startStandInInternet();
  // The stand-in plays the resolver: the host's real ones are never queried.
  t = await createTestRuntime({ dnsResolvers: [STAND_IN.address] });
}, STAND_IN_WAIT_MS + 60_000);
afterAll(async () => {
  await t?.dispose();
  await inet?.close();
});

/** Fetches `url` from inside with a 2 s limit; prints the body or the error's code. */
async function fetchInside(sbx: RuntimeSandbox, url: string): Promise<string> {
  // Node's fetch is loaded first (a refused loopback fetch), so the deadline
  // measures the connection, not module loading on a busy machine.
  const code = `fetch("http://127.0.0.1:9/").catch(() => undefined).then(() => fetch("${url}", { signal: AbortSignal.timeout(5000) })).then((r) => r.text()).then(console.log, (e) => console.log("failed " + (e.cause?.code ?? e.name))).finally(() => process.exit())`;
  return (await runInSandbox(sbx.agentSocket, `/.sandbox-iac/node -e '${code}'`)).stdout.trim();
}

/**
 * Sends a UDP datagram in a hand-made IPv4 header (raw socket, CAP_NET_RAW,
 * as root inside) from `src` to the stand-in's `port`.
 */
async function sendRawUdp(sbx: RuntimeSandbox, src: string, port: number, tag: string) {
  await runInSandbox(
    sbx.agentSocket,
    `python3 -c 'import socket, struct
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b)); s = (s >> 16) + (s & 0xFFFF); s += s >> 16
    return ~s & 0xFFFF
src, dst, data = socket.inet_aton("${src}"), socket.inet_aton("${STAND_IN.address}"), b"${tag}"
udp = struct.pack("!HHHH", 40000, ${port}, 8 + len(data), 0) + data
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, src, dst)
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
s.sendto(ip + udp, ("${STAND_IN.address}", 0))'`,
    { user: "root" },
  );
}

/** Sends `tag` to the stand-in resolver's port 53 from inside; prints the echo or `no answer`. */
async function dnsInside(sbx: RuntimeSandbox, tag: string): Promise<string> {
  const code = `import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.sendto(b"${tag}", ("${STAND_IN.address}", ${STAND_IN.dnsPort}))
try:
    print(s.recv(512).decode())
except socket.timeout:
    print("no answer")`;
  return (await runInSandbox(sbx.agentSocket, `python3 -c '${code}'`)).stdout.trim();
}

function nftTables(): string {
  return execFileSync("nft", ["list", "tables"], { encoding: "utf8" });
}

/** The host's IPv4 links: ifindex, name and address. */
function hostLinks(): { index: string; name: string; address: string }[] {
  return execFileSync("ip", ["-o", "-4", "addr"], { encoding: "utf8" })
    .split("\n")
    .map((l) => /^(\d+):\s+(\S+)\s+inet\s+([\d.]+)\//.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ index: m[1], name: m[2], address: m[3] }));
}

/** The host side of a sandbox's /30 link: the address just below the sandbox's. */
function hostSideOf(sandboxAddress: string): string {
  const parts = sandboxAddress.split(".").map(Number);
  parts[3] = parts[3] - 1;
  return parts.join(".");
}

describe("DNS from a sandbox, under its egress rules", () => {
  // The stand-in resolver answers from outside every always-denied range, so
  // only the sandbox's own rules decide whether a query gets through.
  let n = 0;
  const dnsStart = (overrides: Partial<SandboxSpec> = {}) => start(`netdns${n++}`, overrides);

  it("reaches the resolver with internet access and no rules", async () => {
    const sbx = await dnsStart();
    expect(await dnsInside(sbx, "open-query")).toBe("open-query");
  });

  it("sends no DNS at all without internet access", async () => {
    const sbx = await dnsStart({ allowInternetAccess: false });
    expect(await dnsInside(sbx, "offline-query")).toBe("no answer");
    expect(inet.dnsQueries().join("\n")).not.toContain("offline-query");
  });

  it("closes DNS with denyOut 0.0.0.0/0, and opens it when allowOut names the resolver", async () => {
    const sbx = await dnsStart({ network: { denyOut: ["0.0.0.0/0"] } });
    expect(await dnsInside(sbx, "denied-query")).toBe("no answer");
    expect(inet.dnsQueries().join("\n")).not.toContain("denied-query");
    await sbx.setNetwork({ denyOut: ["0.0.0.0/0"], allowOut: [`${STAND_IN.address}/32`] });
    expect(await dnsInside(sbx, "allowed-query")).toBe("allowed-query");
  });

  it("drops DNS root inside forges with another source address", async () => {
    const sbx = await dnsStart();
    await sendRawUdp(sbx, sbx.address, STAND_IN.dnsPort, "honest-dns");
    await sendRawUdp(sbx, "203.0.113.9", STAND_IN.dnsPort, "forged-dns");
    await eventually(() => inet.dnsQueries().some((q) => q.endsWith(" honest-dns")), {
      timeoutMs: 5_000,
      intervalMs: 50,
    }).catch(() => undefined);
    expect(inet.dnsQueries()).toContain(`${STAND_IN.hostAddress} honest-dns`);
    expect(inet.dnsQueries().join("\n")).not.toContain("forged-dns");
  });
});

describe("a sandbox's own network", () => {
  it("reaches the outside through NAT when it has internet access", async () => {
    const on = await start("neton");
    expect(await fetchInside(on, `${inet.url}/hello`)).toBe("internet /hello");
  });

  it("reaches nothing but its loopback without internet access", async () => {
    const off = await start("netoff", { allowInternetAccess: false });
    expect(await fetchInside(off, inet.url)).toMatch(/^failed /);
    const lo = await runInSandbox(
      off.agentSocket,
      `/.sandbox-iac/node -e 'const h = require("http"); const s = h.createServer((q, r) => r.end("own")).listen(18090, "127.0.0.1", () => h.get("http://127.0.0.1:18090", (r) => r.on("data", (d) => { console.log(String(d)); s.close() })))'`,
    );
    expect(lo.stdout).toBe("own\n");
  });

  it("lets allowOut through without internet access, as E2B's denyOut 0.0.0.0/0 would", async () => {
    const off = await start("netoffallow", {
      allowInternetAccess: false,
      network: { allowOut: ["198.51.100.2"] },
    });
    expect(await fetchInside(off, `${inet.url}/named`)).toBe("internet /named");
    // The stand-in's resolver is on the allowed address: DNS follows the same rules.
    expect(await dnsInside(off, "offline-allow-query")).toBe("offline-allow-query");
  });

  it("drops what denyOut names and lets allowOut through it", async () => {
    const denied = await start("netdeny", { network: { denyOut: ["198.51.100.0/24"] } });
    expect(await fetchInside(denied, inet.url)).toMatch(/^failed /);
    const allowed = await start("netallow", {
      network: { denyOut: ["0.0.0.0/0"], allowOut: ["198.51.100.2"] },
    });
    expect(await fetchInside(allowed, `${inet.url}/ok`)).toBe("internet /ok");
  });

  it("changes the rules of a running sandbox", async () => {
    const sbx = await start("netlive");
    expect(await fetchInside(sbx, `${inet.url}/1`)).toBe("internet /1");
    await sbx.setNetwork({ denyOut: ["0.0.0.0/0"] });
    expect(await fetchInside(sbx, `${inet.url}/2`)).toMatch(/^failed /);
    await sbx.setNetwork({ denyOut: ["0.0.0.0/0"], allowOut: ["198.51.100.0/24"] });
    expect(await fetchInside(sbx, `${inet.url}/3`)).toBe("internet /3");
  });

  it("drops packets root inside forges with another source address", async () => {
    const sbx = await start("netspoof");
    await sendRawUdp(sbx, sbx.address, inet.udpPort, "honest");
    await sendRawUdp(sbx, "203.0.113.9", inet.udpPort, "forged");
    await eventually(() => inet.datagrams().includes(`${STAND_IN.hostAddress} honest`), {
      timeoutMs: 5_000,
      intervalMs: 50,
    }).catch(() => undefined);
    expect(inet.datagrams()).toContain(`${STAND_IN.hostAddress} honest`);
    expect(inet.datagrams().join("\n")).not.toContain("forged");
  });

  it("refuses entries that are neither IPv4 CIDR blocks nor domain names before starting anything", async () => {
    await expect(start("netbad", { network: { allowOut: ["exa mple.com"] } })).rejects.toThrow(
      /network\.allowOut must be an IPv4 address or CIDR block.*got "exa mple\.com"/s,
    );
  });

  it("lets two services starting at once both remove a dead service's table", async () => {
    // A pid that is certainly not running: a process that has exited.
    const deadPid = spawnSync("true").pid;
    const dead = `${NFT_TABLE_PREFIX}${deadPid}_0123abcd`;
    execFileSync("nft", ["add", "table", "inet", dead]);
    const tables = [newTableName(), newTableName()];
    const caDir = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-ca-"));
    const ca = openEdgeCa(caDir);
    try {
      await Promise.all(tables.map((table) => setUpHostNetwork(table, undefined, { ca })));
      expect(nftTables()).not.toContain(dead);
    } finally {
      fs.rmSync(caDir, { recursive: true, force: true });
      for (const table of tables) await tearDownHostNetwork(table);
    }
  });

  it("removes its nftables table and veths when the runtime closes", async () => {
    // Only this runtime's table is this test's: other services of the same jest worker share its pid.
    const own = t.runtime.nftTable;
    expect(nftTables()).toContain(`table inet ${own}\n`);
    expect(started.length).toBeGreaterThan(0);
    // The host side of each sandbox's link holds the address just below the sandbox's.
    const hostSides = new Set(started.map((sbx) => hostSideOf(sbx.address)));
    const ours = hostLinks().filter((l) => hostSides.has(l.address));
    expect(ours).toHaveLength(hostSides.size);
    await t.dispose();
    expect(nftTables()).not.toContain(`table inet ${own}\n`);
    // A host-side veth is identified by its ifindex: once this runtime let its slot go, a service
    // in another jest worker may claim the slot and make a veth of the same name. The kernel
    // deletes a dead namespace's veth from a work queue, a moment after its holder exits.
    const gone = () => hostLinks().filter((l) => ours.some((o) => o.index === l.index));
    await eventually(() => gone().length === 0, { timeoutMs: 30_000, intervalMs: 100 }).catch(
      () => undefined,
    );
    expect(gone()).toEqual([]);
    t = undefined as unknown as TestRuntime;
  });
});
