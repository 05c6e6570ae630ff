/**
 * Entries of E2B's `network.allowOut` and `network.denyOut`: IPv4 addresses
 * or CIDR blocks in both, and in `allowOut` also domain entries
 * (`egress-domains.ts`). The service refuses anything else at create and
 * `PUT /network`; the Provisioner checks its `network` with the same rule at
 * plan.
 *
 * @module
 */
import { DOMAIN_ENTRY_HELP, normalizeDomainEntry } from "./egress-domains";

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
