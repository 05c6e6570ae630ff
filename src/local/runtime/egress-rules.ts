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
import { DOMAIN_ENTRY_HELP, normalizeDomainEntry } from "../../wire/egress-domains";
import type { EgressRules } from "./types";

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;
/** Most rules one list takes. */
export const MAX_EGRESS_RULES = 256;

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

/** True for `a.b.c.d` or `a.b.c.d/n` with every part in range. */
export function isIpv4Cidr(value: string): boolean {
  const m = CIDR.exec(value);
  if (!m) return false;
  const octets = m.slice(1, 5).map(Number);
  const bits = m[5] === undefined ? 32 : Number(m[5]);
  return octets.every((o) => o <= 255) && bits <= 32;
}

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

/**
 * Why `entry` is not a valid item of `allowOut` (domains allowed) or
 * `denyOut` (CIDRs only), as "must be …" text and a fix; undefined when valid.
 */
export function egressEntryProblem(
  entry: unknown,
  list: "allowOut" | "denyOut",
): { allowed: string; fix: string } | undefined {
  if (typeof entry === "string" && isIpv4Cidr(entry)) return undefined;
  const cidrHelp = 'an IPv4 address or CIDR block such as "203.0.113.7" or "198.51.100.0/24"';
  if (list === "denyOut") {
    return {
      allowed: cidrHelp,
      fix: 'domain names are not supported in denyOut (as in E2B); deny everything with "0.0.0.0/0" and list the domains in allowOut',
    };
  }
  if (typeof entry === "string" && normalizeDomainEntry(entry) !== undefined) return undefined;
  return {
    allowed: `${cidrHelp}, or ${DOMAIN_ENTRY_HELP}`,
    fix: 'IPv6 is not supported; a wildcard may only lead (a bare "*" is invalid); write names without a trailing dot or port',
  };
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
