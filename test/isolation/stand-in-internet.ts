/**
 * A network namespace playing "the internet" for the isolation tests, so that
 * no test sends anything beyond this machine: a veth from the host to a
 * namespace holding a TEST-NET-2 address (RFC 5737, never routed publicly)
 * with an HTTP server on it, routed via the host like any outside address.
 * It also plays a DNS resolver: UDP port 53 records each datagram and sends
 * it back (an echo is enough to tell whether DNS got through; tests point the
 * runtime's resolver list at it, never at the host's real resolvers).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pidAlive } from "../../src/local/runtime/pid-alive";
import { eventually } from "../support/eventually";

/** The stand-in's address and the host's address on its link. */
export const STAND_IN = {
  address: "198.51.100.2",
  hostAddress: "198.51.100.1",
  port: 8080,
  udpPort: 9999,
  dnsPort: 53,
};

/**
 * How long a fetch inside a sandbox may take to the stand-in once Node's
 * fetch is loaded: a dropped connection only ends at this deadline, so a
 * blocked fetch waits it out, while an allowed one on this local link answers
 * in milliseconds even on a busy machine.
 */
export const BLOCKED_AFTER_MS = 3_000;
/** The deadline of a fetch expected to get through: one that is not taken as a block. */
export const ALLOWED_WITHIN_MS = 30_000;

/**
 * A `node -e` program for a sandbox that fetches `url` and prints its body, or
 * `failed` when it cannot within `timeoutMs`. Node's fetch is loaded first
 * (by a fetch to a closed loopback port, refused at once), so the deadline
 * covers the connection and not the seconds a loaded machine takes to load
 * it: a short deadline then tells a blocked address from an allowed one.
 */
export function fetchProgram(url: string, timeoutMs: number): string {
  return (
    `fetch("http://127.0.0.1:9/").catch(() => undefined)` +
    `.then(() => fetch("${url}", { signal: AbortSignal.timeout(${timeoutMs}) }))` +
    `.then((r) => r.text()).then(console.log, () => console.log("failed")).finally(() => process.exit())`
  );
}

/**
 * Stops `child` with `signal` and resolves once it exited, so that what it
 * held (addresses, ports, files) is released when a stand-in's `close()`
 * resolves; a child never started or already gone resolves at once. SIGKILL,
 * the default, cannot be caught or ignored: the wait ends when the kernel
 * reaps the process. `ip netns exec` execs its command, so the child is the
 * server itself, not a parent that would outlive it.
 */
export async function killAndWait(
  child: ChildProcess | undefined,
  signal: NodeJS.Signals = "SIGKILL",
): Promise<void> {
  if (!child || child.pid === undefined) return;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

/** A running stand-in; `close` removes the namespace and its veth. */
export interface StandIn {
  url: string;
  /** The namespace's name (`ip netns exec <ns>` runs more servers in it). */
  ns: string;
  /** UDP port where datagrams are received and recorded. */
  udpPort: number;
  /** `"<source address> <payload>"` of every datagram received so far. */
  datagrams(): string[];
  /** `"<source address> <payload>"` of every datagram its DNS port received so far. */
  dnsQueries(): string[];
  /** Resolves once its server exited and the namespace, its veth and the lock are gone. */
  close(): Promise<void>;
}

/**
 * One stand-in at a time on the host: each holds the same addresses, so two
 * (test files in two jest workers) would route each other's packets. The lock
 * is a directory naming its holder's pid; a dead holder's lock is taken over.
 */
const LOCK_DIR = path.join(os.tmpdir(), "sandbox-iac-test-stand-in.lock");

/** How long {@link startStandInInternet} waits for another process's stand-in to close. */
export const STAND_IN_WAIT_MS = 600_000;

/** Names of a stand-in's namespace and of its host-side link, followed by the creator's pid. */
const NS_PREFIX = "sbxtest-inet-";
// Not "sbx…": that prefix is the sandboxes' own, and traffic between sandboxes is dropped.
const VETH_PREFIX = "inetst";

/** Runs `ip` with `args`; its output. */
function ip(...args: string[]): string {
  return execFileSync("ip", args, { stdio: "pipe" }).toString();
}

/** The namespace and host-side link a stand-in made by the process `pid` has. */
export function standInNames(pid: number): { ns: string; veth: string } {
  return { ns: `${NS_PREFIX}${pid}`, veth: `${VETH_PREFIX}${pid % 100000}` };
}

/**
 * Makes the namespace `ns` and the link `veth` from the host into it, with
 * the stand-in's addresses on both ends, all up: a stand-in without its
 * server (which {@link startStandInInternet} then starts in it).
 */
export function addStandInLink(ns: string, veth: string): void {
  ip("netns", "add", ns);
  ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns);
  ip("addr", "add", `${STAND_IN.hostAddress}/24`, "dev", veth);
  ip("link", "set", veth, "up");
  ip("-n", ns, "addr", "add", `${STAND_IN.address}/24`, "dev", "eth0");
  ip("-n", ns, "link", "set", "eth0", "up");
  ip("-n", ns, "link", "set", "lo", "up");
}

/**
 * Removes what stand-ins of test processes that never reached their
 * `close()` left (a run killed mid-way): their servers, namespaces and
 * links. Called with the lock held, when no live stand-in exists; left in
 * place, the stale link holds the same addresses, and the next run's
 * packets to the stand-in went to a namespace whose server was gone (a
 * fork's egress test then read "failed").
 */
function removeStaleStandIns(): void {
  let names: string[];
  try {
    names = fs.readdirSync("/run/netns").filter((n) => n.startsWith(NS_PREFIX));
  } catch {
    names = [];
  }
  for (const ns of names) {
    try {
      for (const pid of ip("netns", "pids", ns).split(/\s+/).filter(Boolean))
        process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone meanwhile
    }
    try {
      ip("netns", "del", ns);
    } catch {
      // gone meanwhile
    }
  }
  let links: string[];
  try {
    links = ip("-br", "link").split("\n");
  } catch {
    links = [];
  }
  for (const line of links) {
    const name = line.split(/[\s@]/)[0];
    if (!name.startsWith(VETH_PREFIX)) continue;
    try {
      ip("link", "del", name);
    } catch {
      // gone with its namespace
    }
  }
}

function tryLock(): boolean {
  try {
    fs.mkdirSync(LOCK_DIR);
    fs.writeFileSync(path.join(LOCK_DIR, "pid"), String(process.pid));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  let owner = NaN;
  try {
    owner = Number(fs.readFileSync(path.join(LOCK_DIR, "pid"), "utf8"));
  } catch {
    // Released meanwhile, or just made and its pid not written yet.
  }
  const made = fs.statSync(LOCK_DIR, { throwIfNoEntry: false })?.mtimeMs;
  if (made === undefined) return false;
  // A lock just made has no pid yet: give its maker a moment before calling it dead.
  const dead = owner > 0 ? !pidAlive(owner) : Date.now() - made > 10_000;
  if (dead) fs.rmSync(LOCK_DIR, { recursive: true, force: true });
  return false;
}

/** What {@link startStandInInternet} takes. */
export interface StandInOptions {
  /**
   * Runs once the lock is held, before the leftovers of killed runs are
   * removed: where a test makes such leftovers without meeting a live
   * stand-in of another test file.
   */
  onLocked?: () => void;
}

/**
 * Creates the namespace, its link and a server answering `internet <path>`,
 * once no other process holds a stand-in (callers give their `beforeAll` the
 * {@link STAND_IN_WAIT_MS} this may take), after removing what stand-ins of
 * killed runs left.
 */
export async function startStandInInternet(options: StandInOptions = {}): Promise<StandIn> {
  await eventually(tryLock, { timeoutMs: STAND_IN_WAIT_MS, intervalMs: 250 });
  try {
    options.onLocked?.();
    removeStaleStandIns();
  } catch (err) {
    fs.rmSync(LOCK_DIR, { recursive: true, force: true });
    throw err;
  }
  const { ns, veth } = standInNames(process.pid);
  const close = async () => {
    // Its server, link and namespace gone before the lock goes: the next
    // stand-in must not meet them (its addresses are the same).
    await killAndWait(server);
    for (const cmd of [
      ["link", "del", veth],
      ["netns", "del", ns],
    ]) {
      try {
        ip(...cmd);
      } catch {
        // already gone
      }
    }
    fs.rmSync(LOCK_DIR, { recursive: true, force: true });
  };
  let server: ChildProcess | undefined;
  const datagrams: string[] = [];
  const dnsQueries: string[] = [];
  try {
    addStandInLink(ns, veth);
    const code = [
      `require("dgram").createSocket("udp4").on("message", (m, r) => console.log("udp " + r.address + " " + m)).bind(${STAND_IN.udpPort});`,
      `const dns = require("dgram").createSocket("udp4"); dns.on("message", (m, r) => { console.log("dns " + r.address + " " + m); dns.send(m, r.port, r.address); }).bind(${STAND_IN.dnsPort}, "${STAND_IN.address}");`,
      `require("http").createServer((q, s) => s.end("internet " + q.url)).listen(${STAND_IN.port}, "0.0.0.0", () => console.log("up"))`,
    ].join(" ");
    server = spawn("ip", ["netns", "exec", ns, process.execPath, "-e", code], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    server.stdout!.on("data", (d: Buffer) => {
      for (const line of d.toString().split("\n")) {
        if (line.startsWith("udp ")) datagrams.push(line.slice(4));
        if (line.startsWith("dns ")) dnsQueries.push(line.slice(4));
      }
    });
    await new Promise<void>((resolve, reject) => {
      server!.stdout!.once("data", () => resolve());
      server!.once("exit", (c) => reject(new Error(`stand-in server exited with ${String(c)}`)));
    });
  } catch (err) {
    await close();
    throw err;
  }
  return {
    url: `http://${STAND_IN.address}:${STAND_IN.port}`,
    ns,
    udpPort: STAND_IN.udpPort,
    datagrams: () => [...datagrams],
    dnsQueries: () => [...dnsQueries],
    close,
  };
}
