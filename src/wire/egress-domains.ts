/**
 * Domain entries of E2B's `network.allowOut` (and, later, the keys of
 * `network.rules`), as the SDK 2.51 type docs and E2B's `spec/openapi.yml`
 * define them: an exact DNS name (`api.example.com`) or one leading wildcard
 * (`*.example.com`), lower-cased on write. A wildcard matches subdomains at
 * any depth but not the apex; a bare `*` is invalid. When several entries
 * match a name, the exact one wins, then the longest wildcard suffix.
 *
 * @module
 */

/** Longest DNS name (RFC 1035, without the trailing dot). */
const MAX_NAME_LENGTH = 253;
/**
 * One label: letters, digits, `-` and `_` (seen in real service names), not
 * starting or ending with `-`, at most 63 characters.
 */
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** What an entry is allowed to look like, for error messages. */
export const DOMAIN_ENTRY_HELP =
  'a DNS name such as "api.example.com" or one leading wildcard such as "*.example.com"';

/** True when `name` (lower-cased) is a DNS name whose last label is not all digits. */
function isDnsName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return false;
  const labels = name.split(".");
  // A last label of digits only is an IPv4 address or a typo of one, never a name (RFC 3696 §2).
  if (/^\d+$/.test(labels[labels.length - 1] ?? "")) return false;
  return labels.every((l) => LABEL.test(l));
}

/**
 * The entry lower-cased when it is a domain entry (exact name or `*.` plus a
 * name), else undefined.
 */
export function normalizeDomainEntry(entry: string): string | undefined {
  const lower = entry.toLowerCase();
  const name = lower.startsWith("*.") ? lower.slice(2) : lower;
  return isDnsName(name) ? lower : undefined;
}

/**
 * The name a client asked for (TLS SNI or HTTP Host, port removed), lower-cased
 * and without a trailing dot, when it is a DNS name; else undefined (an
 * address literal or garbage matches no domain entry).
 */
export function normalizeRequestedName(name: string): string | undefined {
  const lower = name.toLowerCase().replace(/\.$/, "");
  return isDnsName(lower) ? lower : undefined;
}

/**
 * The entry of `entries` (normalized domain entries) that matches `name` (a
 * normalized requested name): the exact entry first, then the longest
 * wildcard whose suffix `name` ends with; undefined when none does.
 */
export function matchDomainEntry(entries: readonly string[], name: string): string | undefined {
  if (entries.includes(name)) return name;
  let best: string | undefined;
  for (const entry of entries) {
    if (!entry.startsWith("*.")) continue;
    // "*.example.com" matches "a.example.com" and "a.b.example.com", not "example.com".
    if (name.endsWith(entry.slice(1)) && (best === undefined || entry.length > best.length)) {
      best = entry;
    }
  }
  return best;
}

/**
 * Every IPv4 destination, as E2B's SDK exports it (`ALL_TRAFFIC`): what
 * `allowInternetAccess: false` adds to `denyOut`.
 */
export const ALL_TRAFFIC = "0.0.0.0/0";
