/**
 * E2B's sandbox network options: `network` in the create body
 * (`allowOut`, `denyOut`, `allowPublicTraffic`, `rules`),
 * `PUT /sandboxes/:id/network` to change the outbound rules of a sandbox
 * (every field replaced, an omitted one cleared), and the traffic access
 * token the proxy then requires for the sandbox's ports.
 *
 * @module
 */
import { z } from "zod";
import { egressEntryProblem, isIpv4Cidr, MAX_EGRESS_RULES } from "../../../wire/egress-entries";
import { DOMAIN_ENTRY_HELP, normalizeDomainEntry } from "../../../wire/egress-domains";
import { headerProblem, RULE_LIMITS, type NetworkRules } from "../../../wire/egress-transforms";
import { serviceError, parseWith, type ControlRequest, type Route } from "../http";
import type { SandboxNetwork, SandboxRecord } from "./record";

/** An `allowOut` / `denyOut` list; domain entries (allowOut only) are lower-cased, as E2B stores them. */
const entryList = (field: "allowOut" | "denyOut") =>
  z
    .array(
      z.string().superRefine((entry, ctx) => {
        const problem = egressEntryProblem(entry, field);
        if (problem)
          ctx.addIssue({
            code: "custom",
            message: `each ${field} entry must be ${problem.allowed}, got ${JSON.stringify(entry)}: ${problem.fix}`,
          });
      }),
    )
    .max(MAX_EGRESS_RULES)
    .transform((list) => list.map((e) => (isIpv4Cidr(e) ? e : (normalizeDomainEntry(e) ?? e))))
    .nullish();

/** Fields this service does not implement: refused rather than ignored. */
const UNSUPPORTED = ["egressProxy", "maskRequestHost", "httpsPorts"] as const;

/** One `SandboxNetworkRule`: `{ transform: { headers } }`, each header checked. */
const ruleSchema = z.object({
  transform: z
    .object({
      headers: z
        .record(z.string(), z.string())
        .superRefine((headers, ctx) => {
          if (Object.keys(headers).length > RULE_LIMITS.headersPerRule)
            ctx.addIssue({
              code: "custom",
              message: `at most ${RULE_LIMITS.headersPerRule} headers per rule`,
            });
          for (const [name, value] of Object.entries(headers)) {
            const problem = headerProblem(name, value);
            if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
          }
        })
        .nullish(),
    })
    .nullish(),
});

/** `rules`: domain entries (lower-cased) to lists of rules; a rule grants no access. */
const rulesSchema = z
  .record(z.string(), z.array(ruleSchema).max(RULE_LIMITS.rulesPerKey))
  .superRefine((rules, ctx) => {
    const keys = Object.keys(rules);
    if (keys.length > RULE_LIMITS.keys)
      ctx.addIssue({ code: "custom", message: `at most ${RULE_LIMITS.keys} domains` });
    for (const key of keys) {
      if (normalizeDomainEntry(key) === undefined)
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `each rules key must be ${DOMAIN_ENTRY_HELP} (addresses and CIDR blocks are not supported as keys)`,
        });
    }
  })
  .transform((rules) => {
    const out: NetworkRules = {};
    for (const [key, list] of Object.entries(rules)) {
      const headers = (r: (typeof list)[number]) => r.transform?.headers;
      // Keys differing only in case name the same domain: their lists are joined in order.
      (out[normalizeDomainEntry(key) ?? key] ??= []).push(
        ...list.map((r) => {
          const h = headers(r);
          return h ? { transform: { headers: h } } : {};
        }),
      );
    }
    return out;
  })
  .nullish();

/** `SandboxNetworkConfig` of the create body. */
const networkConfigSchema = z.object({
  allowPublicTraffic: z.boolean().nullish(),
  allowOut: entryList("allowOut"),
  denyOut: entryList("denyOut"),
  rules: rulesSchema,
});

/** The body of `PUT /sandboxes/:id/network`. */
const networkUpdateSchema = z.object({
  allowOut: entryList("allowOut"),
  denyOut: entryList("denyOut"),
  rules: rulesSchema,
  allow_internet_access: z.boolean().nullish(),
});

function refuseUnsupported(raw: unknown, where: string): void {
  if (typeof raw !== "object" || raw === null) return;
  for (const key of UNSUPPORTED) {
    if ((raw as Record<string, unknown>)[key] !== undefined) {
      throw serviceError(
        "invalid_argument",
        `${where}.${key} is not supported by the local service: leave it out (allowOut, denyOut, rules and allowPublicTraffic are)`,
      );
    }
  }
}

/** The `network` of a create body, validated; undefined when absent. */
export function parseCreateNetwork(raw: unknown): SandboxNetwork | undefined {
  if (raw === undefined || raw === null) return undefined;
  refuseUnsupported(raw, "network");
  const n = parseWith(networkConfigSchema, raw, "network");
  return {
    ...(n.allowOut ? { allowOut: n.allowOut } : {}),
    ...(n.denyOut ? { denyOut: n.denyOut } : {}),
    ...(n.rules && Object.keys(n.rules).length > 0 ? { rules: n.rules } : {}),
    ...(typeof n.allowPublicTraffic === "boolean"
      ? { allowPublicTraffic: n.allowPublicTraffic }
      : {}),
  };
}

/** What `PUT /sandboxes/:id/network` changes. */
export interface NetworkUpdate {
  allowOut: string[];
  denyOut: string[];
  /** The new rules; empty when omitted (the update replaces every field). */
  rules: NetworkRules;
  allowInternetAccess?: boolean | undefined;
}

/** The part of the manager the network route uses. */
export interface NetworkManager {
  updateNetwork(sandboxID: string, update: NetworkUpdate): Promise<void>;
}

/** True when the proxy must ask for the traffic access token. */
export function needsTrafficToken(record: SandboxRecord): boolean {
  return record.network?.allowPublicTraffic === false;
}

/** `PUT /sandboxes/:sandboxID/network`. */
export function networkRoutes(
  manager: NetworkManager,
  idParam: (req: ControlRequest) => string,
): Route[] {
  return [
    {
      method: "PUT",
      pattern: "/sandboxes/:sandboxID/network",
      handler: async (req) => {
        const id = idParam(req);
        const raw: unknown = await req.json();
        refuseUnsupported(raw, "body");
        const body = parseWith(networkUpdateSchema, raw ?? {}, "body");
        await manager.updateNetwork(id, {
          allowOut: body.allowOut ?? [],
          denyOut: body.denyOut ?? [],
          rules: body.rules ?? {},
          ...(typeof body.allow_internet_access === "boolean"
            ? { allowInternetAccess: body.allow_internet_access }
            : {}),
        });
        return { status: 204 };
      },
    },
  ];
}
