/**
 * One sandbox's place in the host network (network.ts has the policy and the
 * table): its veth pair into the holder's network namespace, its addresses
 * and route, its egress and divert chains in the service's table, and its
 * policy at the egress edge. Its own file because it is what each sandbox's
 * start, network update and stop do, apart from what the service sets up once.
 *
 * @module
 */
import { existsSync } from "node:fs";
import type { Slot } from "./slots";
import { divertChain, divertStatements, edgeRoutingCommands, needsEdge } from "./egress-divert";
import { ALWAYS_DENIED, openResolvers } from "./egress-rules";
import { runIpOrNft, type HostNetwork } from "./network";
import type { EgressRules } from "./types";

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
  edgeRouting ??= runIpOrNft("ip", ["rule", "list"]).then(async (existing) => {
    for (const cmd of edgeRoutingCommands(existing)) await runIpOrNft("ip", cmd);
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
    await runIpOrNft("ip", ["link", "del", slot.veth]).catch(() => undefined);
  }
  await runIpOrNft(
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
    runIpOrNft("nft", ["-f", "-"], nft.join("\n")),
    runIpOrNft(
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
  await runIpOrNft("nft", ["-f", "-"], egressStatements(net, slot, rules, edgePort).join("\n"));
  setEdgePolicy(net, slot, rules, sandboxID);
}

/** Removes the sandbox's nft elements and chains, and its edge policy (the veth goes with its namespace). */
export async function disconnectSandbox(net: HostNetwork, slot: Slot): Promise<void> {
  const t = net.table;
  net.edge.setPolicy(slot.sandboxAddress, undefined);
  await runIpOrNft(
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
    await runIpOrNft("ip", ["link", "del", slot.veth]).catch(() => undefined);
  }
}
