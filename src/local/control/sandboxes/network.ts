/**
 * E2B's sandbox network options: `network` in the create body
 * (`allowOut`, `denyOut`, `allowPublicTraffic`, `rules`, `egressProxy`,
 * `maskRequestHost`),
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
import {
  checkEgressProxy,
  maskRequestHostProblem,
  type EgressProxyConfig,
} from "../../../wire/egress-proxy";
import { SandboxNetworkUpdateBody } from "../../../wire/control-requests";
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
const UNSUPPORTED = ["httpsPorts"] as const;

/**
 * `SandboxEgressProxyConfig` at `where`, checked as E2B checks it (400
 * "Invalid egress proxy config: …"); null or absent: no proxy. Checked
 * apart from the zod schemas, whose messages show the value they got: no
 * message here shows the password.
 */
function parseEgressProxy(raw: unknown, where: string): EgressProxyConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  const cfg = raw as Record<string, unknown>;
  const bad = (field: string, allowed: string) =>
    serviceError("invalid_argument", `${where}.${field} must be ${allowed}`);
  if (typeof raw !== "object" || Array.isArray(raw))
    throw serviceError(
      "invalid_argument",
      `${where} must be an object { address, username?, password? }, or null for no proxy`,
    );
  if (typeof cfg.address !== "string")
    throw bad("address", 'a string in host:port form, e.g. "proxy.example.com:1080"');
  for (const field of ["username", "password"] as const) {
    if (cfg[field] !== undefined && cfg[field] !== null && typeof cfg[field] !== "string")
      throw bad(field, "a string of at most 255 bytes (RFC 1929)");
  }
  const checked = checkEgressProxy({
    address: cfg.address,
    username: typeof cfg.username === "string" ? cfg.username : undefined,
    password: typeof cfg.password === "string" ? cfg.password : undefined,
  });
  if ("problem" in checked)
    throw serviceError("invalid_argument", `Invalid egress proxy config: ${checked.problem}`);
  const { host: _host, port: _port, ...proxy } = checked.proxy;
  return proxy;
}

/** `raw` without `egressProxy` (checked by {@link parseEgressProxy}), for the zod schemas. */
function withoutProxy(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const { egressProxy: _proxy, ...rest } = raw as Record<string, unknown>;
  return rest;
}

/** `maskRequestHost`: a host (optional `:port`, `${PORT}` allowed), ASCII. */
const maskRequestHostSchema = z
  .string()
  .superRefine((mask, ctx) => {
    const problem = maskRequestHostProblem(mask);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .nullish();

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
  maskRequestHost: maskRequestHostSchema,
});

/**
 * The body of `PUT /sandboxes/:id/network`: the wire's `SandboxNetworkUpdate`,
 * each entry checked; `egressProxy` is checked apart ({@link parseEgressProxy}).
 */
export const networkUpdateSchema = SandboxNetworkUpdateBody.extend({
  allowOut: entryList("allowOut"),
  denyOut: entryList("denyOut"),
  rules: rulesSchema,
  allow_internet_access: z.boolean().nullish(),
}).strip();

function refuseUnsupported(raw: unknown, where: string, also: readonly string[] = []): void {
  if (typeof raw !== "object" || raw === null) return;
  for (const key of [...UNSUPPORTED, ...also]) {
    if ((raw as Record<string, unknown>)[key] !== undefined) {
      throw serviceError(
        "invalid_argument",
        key === "maskRequestHost"
          ? `${where}.maskRequestHost cannot be changed after create (as in E2B): leave it out`
          : `${where}.${key} is not supported by the local service: leave it out (allowOut, denyOut, rules, egressProxy, maskRequestHost and allowPublicTraffic are)`,
      );
    }
  }
}

/** The `network` of a create body, validated; undefined when absent. */
export function parseCreateNetwork(raw: unknown): SandboxNetwork | undefined {
  if (raw === undefined || raw === null) return undefined;
  refuseUnsupported(raw, "network");
  const egressProxy = parseEgressProxy(
    (raw as { egressProxy?: unknown }).egressProxy,
    "network.egressProxy",
  );
  const n = parseWith(networkConfigSchema, withoutProxy(raw), "network");
  return {
    ...(n.allowOut ? { allowOut: n.allowOut } : {}),
    ...(n.denyOut ? { denyOut: n.denyOut } : {}),
    ...(n.rules && Object.keys(n.rules).length > 0 ? { rules: n.rules } : {}),
    ...(typeof n.allowPublicTraffic === "boolean"
      ? { allowPublicTraffic: n.allowPublicTraffic }
      : {}),
    ...(egressProxy ? { egressProxy } : {}),
    ...(typeof n.maskRequestHost === "string" ? { maskRequestHost: n.maskRequestHost } : {}),
  };
}

/** What `PUT /sandboxes/:id/network` changes. */
export interface NetworkUpdate {
  allowOut: string[];
  denyOut: string[];
  /** The new rules; empty when omitted (the update replaces every field). */
  rules: NetworkRules;
  /** The new SOCKS5 proxy; undefined when omitted (the update replaces every field: no proxy). */
  egressProxy?: EgressProxyConfig | undefined;
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
        refuseUnsupported(raw, "body", ["maskRequestHost"]);
        const egressProxy = parseEgressProxy(
          (raw as { egressProxy?: unknown } | null)?.egressProxy,
          "body.egressProxy",
        );
        const body = parseWith(networkUpdateSchema, withoutProxy(raw) ?? {}, "body");
        await manager.updateNetwork(id, {
          allowOut: body.allowOut ?? [],
          denyOut: body.denyOut ?? [],
          rules: body.rules ?? {},
          ...(egressProxy ? { egressProxy } : {}),
          ...(typeof body.allow_internet_access === "boolean"
            ? { allowInternetAccess: body.allow_internet_access }
            : {}),
        });
        return { status: 204 };
      },
    },
  ];
}
