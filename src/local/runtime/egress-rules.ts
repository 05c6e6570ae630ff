/**
 * Validation of a sandbox's outbound rules (E2B's `network.allowOut` /
 * `network.denyOut`): IPv4 addresses or CIDR blocks, written into nftables
 * rules, and in `allowOut` also domain entries (`api.example.com`,
 * `*.example.com`), which the service's egress edge matches against the
 * name each flow asks for; nothing else may pass.
 *
 * @module
 */
import { invalidArgument } from "../../errors";
import { ALL_TRAFFIC, normalizeDomainEntry } from "../../wire/egress-domains";
import { egressEntryProblem, isIpv4Cidr, MAX_EGRESS_RULES } from "../../wire/egress-entries";
import type { EgressRules, SandboxSpec } from "./types";

/** Destinations no sandbox reaches, whatever its rules say (and whatever a name resolves to). */
export const ALWAYS_DENIED = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "224.0.0.0/4",
  "240.0.0.0/4",
];

/** The address `a.b.c.d` as an unsigned 32-bit number. */
function ipv4Number(address: string): number {
  return address.split(".").reduce((n, o) => n * 256 + Number(o), 0);
}

/** True when the IPv4 address `address` lies in `cidr` (an address or `a.b.c.d/n`). */
export function cidrContains(cidr: string, address: string): boolean {
  const [base, bitsText] = cidr.split("/");
  const bits = bitsText === undefined ? 32 : Number(bitsText);
  // 2^(32-bits) addresses per block; division keeps it exact beyond 31 bits.
  const size = 2 ** (32 - bits);
  return Math.floor(ipv4Number(base ?? "") / size) === Math.floor(ipv4Number(address) / size);
}

/**
 * An `allowOut` list split into its CIDR blocks and its domain entries
 * (lower-cased); entries that are neither are left out (validated before).
 */
export function splitAllowOut(list: readonly string[]): { cidrs: string[]; domains: string[] } {
  const cidrs: string[] = [];
  const domains: string[] = [];
  for (const entry of list) {
    if (isIpv4Cidr(entry)) cidrs.push(entry);
    else {
      const domain = normalizeDomainEntry(entry);
      if (domain !== undefined && !domains.includes(domain)) domains.push(domain);
    }
  }
  return { cidrs, domains };
}

/** Throws `invalid_argument` unless `network` holds valid `allowOut` / `denyOut` lists. */
export function assertNetwork(operation: string, network: unknown): void {
  if (typeof network !== "object" || network === null) {
    throw invalidArgument(operation, "network", network, "an object with allowOut and/or denyOut");
  }
  for (const key of ["allowOut", "denyOut"] as const) {
    const list = (network as Record<string, unknown>)[key];
    if (list === undefined) continue;
    const field = `network.${key}`;
    if (!Array.isArray(list) || list.length > MAX_EGRESS_RULES) {
      throw invalidArgument(
        operation,
        field,
        list,
        `a list of at most ${MAX_EGRESS_RULES} entries`,
      );
    }
    for (const item of list) {
      const problem = egressEntryProblem(item, key);
      if (problem) throw invalidArgument(operation, field, item, problem.allowed, problem.fix);
    }
  }
}

/**
 * The resolvers a sandbox with internet access may send DNS to: those its
 * rules let through, judged as any other destination (allowOut wins over
 * denyOut), except that a resolver in a private range stays reachable; and
 * all of them when `allowOut` names a domain (the sandbox must resolve the
 * names it may reach, through the same resolvers the edge asks).
 */
export function openResolvers(resolvers: readonly string[], rules: EgressRules): string[] {
  if (!rules.internet) return [];
  if (rules.allowDomains.length > 0) return [...resolvers];
  return resolvers.filter(
    (r) =>
      rules.allowOut.some((c) => cidrContains(c, r)) ||
      !rules.denyOut.some((c) => cidrContains(c, r)),
  );
}

/**
 * The rules a spec asks for. E2B defines `allowInternetAccess: false` as
 * `denyOut: ["0.0.0.0/0"]` (SDK 2.51 `SandboxOpts.allowInternetAccess`), and
 * `allowOut` wins over `denyOut`: so without internet access an `allowOut`
 * entry still opens its destination. With no `allowOut` at all the sandbox
 * is closed outright (`internet: false`), DNS included.
 */
export function egressRulesOf(
  spec: Pick<SandboxSpec, "allowInternetAccess" | "network">,
): EgressRules {
  const { cidrs, domains } = splitAllowOut(spec.network?.allowOut ?? []);
  const denyOut = spec.network?.denyOut ?? [];
  const allowsSome = cidrs.length > 0 || domains.length > 0;
  return {
    internet: spec.allowInternetAccess || allowsSome,
    allowOut: cidrs,
    allowDomains: domains,
    denyOut:
      spec.allowInternetAccess || denyOut.includes(ALL_TRAFFIC)
        ? denyOut
        : [...denyOut, ALL_TRAFFIC],
    rules: spec.network?.rules ?? {},
    ...(spec.network?.egressProxy ? { egressProxy: spec.network.egressProxy } : {}),
  };
}
