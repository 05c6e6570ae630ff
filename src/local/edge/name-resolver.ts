/**
 * The service's own answer to "does this name resolve to this address?",
 * asked through the same resolvers the sandboxes use, with answers kept for
 * their TTL (at most five minutes) so that a flow right after the sandbox's
 * own lookup costs no query, and round-robin answers seen earlier still count.
 *
 * @module
 */
import { Resolver } from "node:dns/promises";

/** Longest time an answer is kept, whatever its TTL. */
const MAX_TTL_S = 300;
/** Most names kept (the oldest go first). */
const MAX_NAMES = 4096;

/** Resolves names for the edge. */
export interface NameResolver {
  /** True when `name` resolves (IPv4) to `address`, now or within the TTL of an earlier answer. */
  resolvesTo(name: string, address: string): Promise<boolean>;
}

interface Answer {
  addresses: Set<string>;
  expiresAt: number;
}

/**
 * A resolver asking `servers` (IPv4 addresses, port 53), or the host's
 * resolv.conf when none are given.
 */
export function createNameResolver(servers: readonly string[]): NameResolver {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  const answers = new Map<string, Answer>();
  const inFlight = new Map<string, Promise<Answer>>();

  async function query(name: string): Promise<Answer> {
    const records = await resolver.resolve4(name, { ttl: true }).catch(() => []);
    const now = Date.now();
    const kept = answers.get(name);
    const fresh = kept && kept.expiresAt > now ? kept : undefined;
    // No answer (NXDOMAIN, timeout): what was seen before keeps its own expiry, no more.
    if (records.length === 0) return fresh ?? { addresses: new Set(), expiresAt: now };
    const addresses = new Set(fresh?.addresses ?? []);
    let ttl = MAX_TTL_S;
    for (const r of records) {
      addresses.add(r.address);
      ttl = Math.min(ttl, Math.max(1, r.ttl));
    }
    const answer = { addresses, expiresAt: now + ttl * 1000 };
    answers.delete(name);
    answers.set(name, answer);
    if (answers.size > MAX_NAMES) answers.delete(answers.keys().next().value as string);
    return answer;
  }

  return {
    async resolvesTo(name, address) {
      const kept = answers.get(name);
      if (kept && kept.expiresAt > Date.now() && kept.addresses.has(address)) return true;
      // One query per name at a time, whatever the number of flows waiting for it.
      let pending = inFlight.get(name);
      if (!pending) {
        pending = query(name).finally(() => inFlight.delete(name));
        inFlight.set(name, pending);
      }
      return (await pending).addresses.has(address);
    },
  };
}
