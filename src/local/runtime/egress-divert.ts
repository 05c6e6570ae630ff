/**
 * The nftables side of domain allow-lists: per sandbox, a `divert` chain in
 * the prerouting hook sends (TPROXY) each new TCP flow that its `denyOut`
 * would drop, while its `allowOut` names domains, to the service's egress
 * edge (src/local/edge), which lets it through or resets it. Everything
 * else goes on to the forward hook and the sandbox's egress chain as before.
 * With an `egressProxy`, every TCP flow its rules let out goes to the edge
 * too (which tunnels it through the proxy); UDP (DNS, QUIC) leaves the usual
 * way, as on E2B.
 *
 * TPROXY delivers a packet addressed elsewhere to a local socket, which
 * needs the packet routed locally: packets marked {@link EDGE_FWMARK} are
 * looked up in route table {@link EDGE_ROUTE_TABLE}, which holds one
 * `local 0.0.0.0/0 dev lo` route. The rule and the table are shared by every
 * service on the host, added once and left in place (like `ip_forward`):
 * nothing but these services' divert chains sets the mark.
 *
 * @module
 */
import { ALWAYS_DENIED } from "./egress-rules";
import type { Slot } from "./slots";
import type { EgressRules } from "./types";

/** Packet mark of flows sent to an edge ("sb1c"), and of the rest of their packets. */
export const EDGE_FWMARK = 0x5b1c;
/** Route table holding the local route of marked packets. */
const EDGE_ROUTE_TABLE = 23324;

/** The divert chain of `slot`. */
export function divertChain(slot: Slot): string {
  return `divert${slot.index}`;
}

/** Ports whose TCP goes to the edge, whatever the address rules, when a sandbox has `network.rules`. */
const RULE_PORTS = [80, 443];

/** True when the sandbox has `network.rules` (and internet access). */
function hasRules(rules: EgressRules): boolean {
  return rules.internet && Object.keys(rules.rules).length > 0;
}

/**
 * True when the rules need the edge: domains allowed and something denied,
 * `network.rules` to apply, or an `egressProxy` to tunnel through.
 */
export function needsEdge(rules: EgressRules): boolean {
  return (
    (rules.internet && rules.allowDomains.length > 0 && rules.denyOut.length > 0) ||
    hasRules(rules) ||
    (rules.internet && rules.egressProxy !== undefined)
  );
}

/**
 * nft statements (re)filling the divert chain of `slot`: flows the egress
 * chain accepts or always drops are left to it; TCP to a `denyOut` block
 * goes to the edge on 127.0.0.1:`edgePort` (undefined when not needed).
 */
export function divertStatements(
  table: string,
  slot: Slot,
  rules: EgressRules,
  resolvers: readonly string[],
  edgePort: number | undefined,
): string[] {
  const chain = divertChain(slot);
  const add = (rule: string) => `add rule inet ${table} ${chain} ${rule}`;
  const lines = [`flush chain inet ${table} ${chain}`];
  if (edgePort === undefined || !needsEdge(rules)) return lines;
  // Forged sources, DNS and always-denied ranges: the egress chain decides, as without domains.
  lines.push(add(`ip saddr != ${slot.sandboxAddress} return`));
  if (resolvers.length) lines.push(add(`ip daddr { ${resolvers.join(", ")} } tcp dport 53 return`));
  lines.push(add(`ip daddr { ${ALWAYS_DENIED.join(", ")} } return`));
  const mark = `0x${EDGE_FWMARK.toString(16)}`;
  const toEdge = `tproxy ip to 127.0.0.1:${edgePort} meta mark set ${mark} accept`;
  // Web ports go to the edge whatever the address rules: it applies the rules and the same policy.
  if (hasRules(rules))
    lines.push(add(`meta nfproto ipv4 tcp dport { ${RULE_PORTS.join(", ")} } ${toEdge}`));
  const tcpToEdge = `meta nfproto ipv4 meta l4proto tcp ${toEdge}`;
  // With a proxy every TCP flow the rules let out goes through it, so through the edge.
  for (const cidr of rules.allowOut)
    lines.push(add(`ip daddr ${cidr} ${rules.egressProxy ? tcpToEdge : "return"}`));
  // Without domains, what denyOut drops stays dropped by the egress chain.
  for (const cidr of rules.allowDomains.length === 0 ? [] : rules.denyOut) {
    lines.push(add(`ip daddr ${cidr} ${tcpToEdge}`));
  }
  if (rules.egressProxy) {
    for (const cidr of rules.denyOut) lines.push(add(`ip daddr ${cidr} return`));
    lines.push(add(tcpToEdge));
  }
  return lines;
}

/** `ip` commands making marked packets local (idempotent: `ip rule` is added only when missing). */
export function edgeRoutingCommands(existingRules: string): string[][] {
  const mark = `0x${EDGE_FWMARK.toString(16)}`;
  const commands = [
    ["route", "replace", "local", "0.0.0.0/0", "dev", "lo", "table", String(EDGE_ROUTE_TABLE)],
  ];
  if (!existingRules.includes(`fwmark ${mark} lookup ${EDGE_ROUTE_TABLE}`)) {
    commands.push(["rule", "add", "fwmark", mark, "lookup", String(EDGE_ROUTE_TABLE)]);
  }
  return commands;
}
