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
 * This file holds what is made once per service: the table, its chains and
 * sets, and the resolvers; each sandbox's link and egress chain, filled into
 * them, are sandbox-network.ts.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import { invalidArgument } from "../../errors";
import { execHost } from "./exec";
import { pidAlive } from "./pid-alive";
import { NFT_TABLE_PREFIX, SANDBOX_SUBNET, VETH_PREFIX } from "./constants";
import { createEgressEdge, type EgressEdge, type EgressEdgeOptions } from "../edge/edge";
import { EDGE_FWMARK } from "./egress-divert";
import { isIpv4Cidr } from "../../wire/egress-entries";
import { explainTableFailure } from "./nft-features";

const OPERATION = "runtime.network";

/**
 * Runs `ip` or `nft` on the host under this module's operation, the input (a
 * batch of commands or rules) shown in the error when it fails: the one way
 * both the host's table here and each sandbox's link (sandbox-network.ts) are
 * changed.
 */
export async function runIpOrNft(file: string, args: string[], input?: string): Promise<string> {
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
  await runIpOrNft(
    "nft",
    ["-f", "-"],
    `table inet ${t} {}\ndelete table inet ${t}\n${ruleset}`,
  ).catch(async (err: unknown) => {
    throw await explainTableFailure(err);
  });
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
  const listing = await runIpOrNft("nft", ["list", "tables"]);
  const pattern = new RegExp(`^table inet (${NFT_TABLE_PREFIX}(\\d+)_[0-9a-f]+)$`, "gm");
  const removed: string[] = [];
  for (const m of listing.matchAll(pattern)) {
    const pid = Number(m[2]);
    if (pid !== alsoPid && pidAlive(pid)) continue;
    // Another service starting at the same time may remove the same dead table first.
    await runIpOrNft("nft", ["delete", "table", "inet", m[1]]).catch(async (err: unknown) => {
      const tables = await runIpOrNft("nft", ["list", "tables"]);
      if (tables.split("\n").includes(`table inet ${m[1]}`)) throw err;
    });
    removed.push(m[1]);
  }
  return removed;
}

/** Removes the runtime's table. */
export async function tearDownHostNetwork(t: string): Promise<void> {
  await runIpOrNft("nft", ["delete", "table", "inet", t]).catch(() => undefined);
}
