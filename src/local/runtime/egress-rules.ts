/**
 * Validation of a sandbox's outbound rules (E2B's `network.allowOut` /
 * `network.denyOut`): IPv4 addresses or CIDR blocks, written into nftables
 * rules, so nothing else may pass.
 *
 * @module
 */
import { invalidArgument } from "../../errors";
import type { EgressRules } from "./types";

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;
/** Most rules one list takes. */
export const MAX_EGRESS_RULES = 256;

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
        `a list of at most ${MAX_EGRESS_RULES} IPv4 CIDR blocks`,
      );
    }
    for (const item of list) {
      if (typeof item !== "string" || !isIpv4Cidr(item)) {
        throw invalidArgument(
          operation,
          field,
          item,
          'an IPv4 address or CIDR block such as "203.0.113.7" or "198.51.100.0/24"',
          'domain names are not supported; use "0.0.0.0/0" in denyOut to block all traffic',
        );
      }
    }
  }
}

/**
 * The resolvers a sandbox with internet access may send DNS to: those its
 * rules let through, judged as any other destination (allowOut wins over
 * denyOut), except that a resolver in a private range stays reachable.
 */
export function openResolvers(resolvers: readonly string[], rules: EgressRules): string[] {
  if (!rules.internet) return [];
  return resolvers.filter(
    (r) =>
      rules.allowOut.some((c) => cidrContains(c, r)) ||
      !rules.denyOut.some((c) => cidrContains(c, r)),
  );
}
