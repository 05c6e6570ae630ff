/**
 * Each sandbox's own network: a veth pair between the host and the holder's
 * network namespace, and one nftables table per service process that
 * decides what may leave it.
 *
 * - Nothing new reaches the host from a sandbox (input: only replies), so
 *   the host's 127.0.0.1 and its other addresses are closed to it; its
 *   loopback is its own.
 * - Nothing new reaches a sandbox (forward to a sandbox veth: only replies);
 *   the service's proxy connects from the host itself, which is allowed.
 * - Out of a sandbox, in its own egress chain and in this order: packets
 *   whose source is not the sandbox's address are dropped (root inside can
 *   forge them); without internet access everything else is dropped too
 *   (DNS included); DNS to the host's resolvers is accepted when the
 *   sandbox's rules let the resolver's address through (`allowOut` names it,
 *   or `denyOut` does not), whatever range it is in; private, loopback,
 *   link-local (cloud metadata), CGNAT, multicast and reserved ranges are
 *   dropped; then `allowOut` CIDRs are accepted, `denyOut` CIDRs dropped,
 *   and the rest masqueraded out.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import * as fs from "node:fs/promises";
import { invalidArgument } from "../../errors";
import { execHost } from "./exec";
import { pidAlive } from "./pid-alive";
import { NFT_TABLE_PREFIX, SANDBOX_SUBNET, VETH_PREFIX } from "./constants";
import type { Slot } from "./slots";
import { createEgressEdge, type EgressEdge, type EgressEdgeOptions } from "../edge/edge";
import {
  divertChain,
  divertStatements,
  edgeRoutingCommands,
  EDGE_FWMARK,
  needsEdge,
} from "./egress-divert";
import { isIpv4Cidr } from "../../wire/egress-entries";
import { ALWAYS_DENIED, openResolvers } from "./egress-rules";
import { explainTableFailure } from "./nft-features";
import type { EgressRules } from "./types";

const OPERATION = "runtime.network";

async function run(file: string, args: string[], input?: string): Promise<string> {
  return (await execHost(OPERATION, file, args, { input, showInput: true })).stdout;
}

/** A new table name for one runtime of this process: `<prefix><pid>_<random>`. */
export function newTableName(): string {
  return `${NFT_TABLE_PREFIX}${process.pid}_${randomBytes(4).toString("hex")}`;
}

/** IPv4 nameservers of the host's resolv.conf (the sandboxes get a copy of it). */
async function hostResolvers(): Promise<string[]> {
  const text = await fs.readFile("/etc/resolv.conf", "utf8").catch(() => "");
  return [...text.matchAll(/^nameserver\s+(\d+\.\d+\.\d+\.\d+)\s*$/gm)].map((m) => m[1]);
}

/** A runtime's table and the resolvers its sandboxes may send DNS to. */
export interface HostNetwork {
  /** The nftables table (inet family). */
  table: string;
  /** IPv4 addresses of the DNS resolvers, reached on port 53 under each sandbox's rules. */
  resolvers: readonly string[];
  /** Where flows to allowed domains are checked (listening once a sandbox needs it). */
  edge: EgressEdge;
  /** Host directory of the edge CA's trust files, bound read-only into every sandbox. */
  trustDir: string;
}

/** What the edge needs besides the resolvers. */
export type HostEdgeOptions = Omit<EgressEdgeOptions, "resolvers">;

/**
 * Creates this service's table (replacing one left by an earlier process with
 * the same pid), removes tables of services that are gone, and turns on IPv4
 * forwarding, which NAT needs.
 *
 * @param resolvers - the DNS resolvers' addresses; by default the host's
 *   (its resolv.conf, loopback ones left out: a sandbox's loopback is its own)
 */
export async function setUpHostNetwork(
  t: string,
  resolvers: string[] | undefined,
  edge: HostEdgeOptions,
): Promise<HostNetwork> {
  const dns = (resolvers ?? (await hostResolvers())).filter((r) => !r.startsWith("127."));
  for (const r of dns) {
    if (!isIpv4Cidr(r) || r.includes("/"))
      throw invalidArgument(
        OPERATION,
        "dnsResolvers",
        r,
        "IPv4 addresses",
        'give addresses such as "192.0.2.53"',
      );
  }
  await removeTablesOfDeadServices();
  // Anti-spoofing comes first: a packet from a sandbox's link whose source is
  // not that sandbox's address is dropped before anything can accept it (even
  // as part of a connection: it could carry a neighbour's address and ports).
  // Then each sandbox's egress chain is its whole policy, DNS included.
  // TCP its divert chain sends to the edge (marked) is delivered locally
  // instead, and so is the rest of such a flow (its socket is transparent).
  const mark = `0x${EDGE_FWMARK.toString(16)}`;
  const ruleset = `
table inet ${t} {
  set sandboxes { type ifname; }
  set sources { type ifname . ipv4_addr; }
  map egress { type ifname : verdict; }
  map divert { type ifname : verdict; }
  chain prerouting {
    type filter hook prerouting priority mangle; policy accept;
    iifname @sandboxes meta l4proto tcp socket transparent 1 meta mark set ${mark} accept
    iifname vmap @divert
  }
  chain input {
    type filter hook input priority -10; policy accept;
    iifname @sandboxes meta nfproto ipv6 drop
    iifname @sandboxes iifname . ip saddr != @sources drop
    iifname @sandboxes meta mark ${mark} accept
    iifname @sandboxes ct state established,related accept
    iifname @sandboxes drop
  }
  chain forward {
    type filter hook forward priority -10; policy accept;
    oifname @sandboxes ct state established,related accept
    oifname @sandboxes drop
    iifname @sandboxes meta nfproto ipv6 drop
    iifname @sandboxes iifname . ip saddr != @sources drop
    iifname @sandboxes ct state established,related accept
    iifname @sandboxes oifname "${VETH_PREFIX}*" drop
    iifname vmap @egress
    iifname @sandboxes drop
  }
  chain postrouting {
    type nat hook postrouting priority 100; policy accept;
    ip saddr ${SANDBOX_SUBNET} iifname @sandboxes masquerade
  }
}
`;
  await run("nft", ["-f", "-"], `table inet ${t} {}\ndelete table inet ${t}\n${ruleset}`).catch(
    async (err: unknown) => {
      throw await explainTableFailure(err);
    },
  );
  await fs.writeFile("/proc/sys/net/ipv4/ip_forward", "1");
  return {
    table: t,
    resolvers: dns,
    edge: createEgressEdge({ ...edge, resolvers: dns }),
    trustDir: edge.ca.trustDir,
  };
}

/**
 * Removes the tables of services whose process is gone (a `kill -9` leaves no
 * chance to clean up), and of `alsoPid` when given (a test runner whose
 * services have all closed). Returns the names removed.
 */
export async function removeTablesOfDeadServices(alsoPid?: number): Promise<string[]> {
  const listing = await run("nft", ["list", "tables"]);
  const pattern = new RegExp(`^table inet (${NFT_TABLE_PREFIX}(\\d+)_[0-9a-f]+)$`, "gm");
  const removed: string[] = [];
  for (const m of listing.matchAll(pattern)) {
    const pid = Number(m[2]);
    if (pid !== alsoPid && pidAlive(pid)) continue;
    // Another service starting at the same time may remove the same dead table first.
    await run("nft", ["delete", "table", "inet", m[1]]).catch(async (err: unknown) => {
      const tables = await run("nft", ["list", "tables"]);
      if (tables.split("\n").includes(`table inet ${m[1]}`)) throw err;
    });
    removed.push(m[1]);
  }
  return removed;
}

/** Removes the runtime's table. */
export async function tearDownHostNetwork(t: string): Promise<void> {
  await run("nft", ["delete", "table", "inet", t]).catch(() => undefined);
}

function egressChain(slot: Slot): string {
  return `egress${slot.index}`;
}

let edgeRouting: Promise<void> | undefined;

/**
 * The edge's port when `rules` need it (listening, and marked packets routed
 * locally; both once per process), else undefined.
 */
async function edgePortFor(net: HostNetwork, rules: EgressRules): Promise<number | undefined> {
  if (!needsEdge(rules)) return undefined;
  edgeRouting ??= run("ip", ["rule", "list"]).then(async (existing) => {
    for (const cmd of edgeRoutingCommands(existing)) await run("ip", cmd);
  });
  edgeRouting = edgeRouting.catch((err: unknown) => {
    edgeRouting = undefined;
    throw err;
  });
  await edgeRouting;
  return net.edge.port();
}

/** Tells the edge what `slot`'s sandbox may reach by name, and its rules. */
function setEdgePolicy(net: HostNetwork, slot: Slot, rules: EgressRules, sandboxID: string): void {
  net.edge.setPolicy(
    slot.sandboxAddress,
    needsEdge(rules)
      ? {
          sandboxID,
          domains: rules.allowDomains,
          allowCidrs: rules.allowOut,
          denyCidrs: rules.denyOut,
          rules: rules.rules,
          proxy: rules.egressProxy,
        }
      : undefined,
  );
}

/**
 * nft statements (re)filling the egress and divert chains of `slot` from
 * `rules` (`edgePort` from {@link edgePortFor}).
 */
function egressStatements(
  net: HostNetwork,
  slot: Slot,
  rules: EgressRules,
  edgePort: number | undefined,
): string[] {
  const t = net.table;
  const chain = egressChain(slot);
  const add = (rule: string) => `add rule inet ${t} ${chain} ${rule}`;
  const lines = [
    ...divertStatements(t, slot, rules, openResolvers(net.resolvers, rules), edgePort),
    `flush chain inet ${t} ${chain}`,
  ];
  // First, whatever the rules (the forward chain checks it too, before it
  // accepts replies): root inside has CAP_NET_RAW, and a packet with another
  // source than the sandbox's own address is forged.
  lines.push(add(`ip saddr != ${slot.sandboxAddress} drop`));
  if (!rules.internet) {
    lines.push(add("drop"));
    return lines;
  }
  const dns = openResolvers(net.resolvers, rules);
  if (dns.length)
    lines.push(add(`ip daddr { ${dns.join(", ")} } meta l4proto { tcp, udp } th dport 53 accept`));
  lines.push(add(`ip daddr { ${ALWAYS_DENIED.join(", ")} } drop`));
  // One rule per block: overlapping blocks in one anonymous set are refused by nft.
  for (const cidr of rules.allowOut) lines.push(add(`ip daddr ${cidr} accept`));
  for (const cidr of rules.denyOut) lines.push(add(`ip daddr ${cidr} drop`));
  lines.push(add("accept"));
  return lines;
}

/**
 * Connects the holder's network namespace: veth, addresses, routes, and the
 * sandbox's egress chain. Without internet access the link still exists (the
 * proxy reaches the sandbox's ports over it) but every packet out is dropped.
 */
export async function connectSandbox(
  net: HostNetwork,
  slot: Slot,
  holderPid: number,
  rules: EgressRules,
  sandboxID: string,
): Promise<void> {
  // A veth of an earlier holder with this slot dies with its namespace; this one may not have yet.
  if (existsSync(`/sys/class/net/${slot.veth}`)) {
    await run("ip", ["link", "del", slot.veth]).catch(() => undefined);
  }
  await run(
    "ip",
    ["-batch", "-"],
    [
      `link add ${slot.veth} type veth peer name eth0 netns ${holderPid}`,
      `addr add ${slot.hostAddress}/30 dev ${slot.veth}`,
      `link set ${slot.veth} up`,
    ].join("\n"),
  );
  const t = net.table;
  const edgePort = await edgePortFor(net, rules);
  setEdgePolicy(net, slot, rules, sandboxID);
  const nft = [
    `add chain inet ${t} ${egressChain(slot)}`,
    `add chain inet ${t} ${divertChain(slot)}`,
    ...egressStatements(net, slot, rules, edgePort),
    `add element inet ${t} sources { "${slot.veth}" . ${slot.sandboxAddress} }`,
    `add element inet ${t} egress { "${slot.veth}" : jump ${egressChain(slot)} }`,
    `add element inet ${t} divert { "${slot.veth}" : jump ${divertChain(slot)} }`,
    `add element inet ${t} sandboxes { "${slot.veth}" }`,
  ];
  await Promise.all([
    run("nft", ["-f", "-"], nft.join("\n")),
    run(
      "nsenter",
      ["-t", String(holderPid), "-n", "ip", "-batch", "-"],
      [
        "link set lo up",
        `addr add ${slot.sandboxAddress}/30 dev eth0`,
        "link set eth0 up",
        `route add default via ${slot.hostAddress}`,
      ].join("\n"),
    ),
  ]);
}

/** Replaces the egress rules of a connected sandbox (atomically). */
export async function setEgressRules(
  net: HostNetwork,
  slot: Slot,
  rules: EgressRules,
  sandboxID: string,
): Promise<void> {
  const edgePort = await edgePortFor(net, rules);
  // Widened before the nft rules send flows to it, narrowed (below) after they stop.
  if (needsEdge(rules)) setEdgePolicy(net, slot, rules, sandboxID);
  await run("nft", ["-f", "-"], egressStatements(net, slot, rules, edgePort).join("\n"));
  setEdgePolicy(net, slot, rules, sandboxID);
}

/** Removes the sandbox's nft elements and chains, and its edge policy (the veth goes with its namespace). */
export async function disconnectSandbox(net: HostNetwork, slot: Slot): Promise<void> {
  const t = net.table;
  net.edge.setPolicy(slot.sandboxAddress, undefined);
  await run(
    "nft",
    ["-f", "-"],
    [
      `delete element inet ${t} egress { "${slot.veth}" }`,
      `delete element inet ${t} divert { "${slot.veth}" }`,
      `delete element inet ${t} sandboxes { "${slot.veth}" }`,
      `delete element inet ${t} sources { "${slot.veth}" . ${slot.sandboxAddress} }`,
      `delete chain inet ${t} ${egressChain(slot)}`,
      `delete chain inet ${t} ${divertChain(slot)}`,
    ].join("\n"),
  ).catch(() => undefined);
  // Normally gone with the holder's namespace already.
  if (existsSync(`/sys/class/net/${slot.veth}`)) {
    await run("ip", ["link", "del", slot.veth]).catch(() => undefined);
  }
}
