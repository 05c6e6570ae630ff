/**
 * A Provisioner's `network`: the outbound rules of the sandbox it creates, as
 * E2B's `Sandbox.create({ network })` takes them, in a shape every adapter can
 * type. E2B's `rules` is a map of domain to a list of rules; Terraform and the
 * cdktf/cdktn generators type a map of lists of objects as a map of their own
 * list classes, which a CDK program in TypeScript cannot build. So `rules` is
 * a list of per-domain objects (`{ domain, headers }`), checked here and
 * turned into E2B's map once, when the sandbox is created
 * ({@link sandboxNetworkOf}). One entry per domain loses nothing: E2B applies
 * a domain's rules in order, each setting headers (a later one replacing a
 * header of the same name), which is one header map.
 *
 * @module
 */
import { z } from "zod";
import { DOMAIN_ENTRY_HELP, normalizeDomainEntry } from "../../wire/egress-domains";
import { egressEntryProblem, MAX_EGRESS_RULES } from "../../wire/egress-entries";
import { checkEgressProxy } from "../../wire/egress-proxy";
import { headerProblem, RULE_LIMITS } from "../../wire/egress-transforms";

/**
 * An `allowOut` or `denyOut` list, each entry checked with the service's own
 * rule (`src/wire/egress-entries.ts`): a domain in `denyOut` is refused at plan.
 */
const egressList = (list: "allowOut" | "denyOut") =>
  z
    .array(
      z.string().superRefine((entry, ctx) => {
        const problem = egressEntryProblem(entry, list);
        if (problem)
          ctx.addIssue({
            code: "custom",
            message: `must be ${problem.allowed}: ${problem.fix}`,
          });
      }),
    )
    .max(MAX_EGRESS_RULES, `must hold at most ${MAX_EGRESS_RULES} entries`)
    .optional();

/** A rule's headers, each checked with the service's own rule (src/wire/egress-transforms.ts). */
const headersSchema = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  const names = Object.keys(headers);
  if (names.length > RULE_LIMITS.headersPerRule)
    ctx.addIssue({
      code: "custom",
      message: `must hold at most ${RULE_LIMITS.headersPerRule} headers: split the credentials over fewer headers`,
    });
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    // A value still unknown (a plan) is checked once known.
    if (typeof value !== "string") continue;
    const problem = headerProblem(name, value);
    if (problem) {
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `${problem}: a rule sets headers such as "Authorization" or "X-Api-Key" (an HTTP token name, not Host or a header that frames the request, a value on one line of at most ${RULE_LIMITS.valueBytes} bytes)`,
      });
      continue;
    }
    // HTTP field names are case-insensitive: two spellings would set one header twice.
    const earlier = seen.get(name.toLowerCase());
    if (earlier !== undefined)
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `names the same header as ${JSON.stringify(earlier)} (header names are case-insensitive): keep one of them`,
      });
    else seen.set(name.toLowerCase(), name);
  }
});

/** One domain's rule: the headers set on its requests. */
const ruleSchema = z.strictObject({
  domain: z
    .string()
    .refine((d) => normalizeDomainEntry(d) !== undefined, {
      message: `must be ${DOMAIN_ENTRY_HELP} (addresses and CIDR blocks are not supported)`,
    })
    .meta({
      description:
        'The requests the rule applies to, by the name they ask for (TLS SNI or HTTP Host): an exact name ("pypi.example.com") or one leading wildcard ("*.example.com", subdomains only), as E2B\'s rule keys. Each domain once; the exact one wins over a wildcard.',
    }),
  headers: headersSchema.meta({
    description:
      "Headers set on each matching request, replacing one of the same name (E2B's transform.headers). A value may hold ${e2b.secrets.NAME} (a Secret's name), filled by the service for each request: the sandbox never holds the value. In HCL and CDK write $${e2b.secrets.NAME} (Terraform reads ${...} as its own template).",
  }),
});

/** `network.rules`: at most one entry per domain, as E2B keys its map. */
const rulesSchema = z
  .array(ruleSchema)
  .max(RULE_LIMITS.keys, `must hold at most ${RULE_LIMITS.keys} domains`)
  .superRefine((rules, ctx) => {
    // The service lower-cases domains: "Mirror.test" and "mirror.test" are one key.
    const first = new Map<string, number>();
    rules.forEach((rule, i) => {
      // A domain still unknown (a plan) is checked once known.
      const key = typeof rule.domain === "string" ? normalizeDomainEntry(rule.domain) : undefined;
      if (key === undefined) return;
      const earlier = first.get(key);
      if (earlier === undefined) {
        first.set(key, i);
        return;
      }
      ctx.addIssue({
        code: "custom",
        path: [i, "domain"],
        message: `repeats the domain of rules[${earlier}] (${JSON.stringify(key)}; domains are case-insensitive): give each domain once, with all its headers in that entry`,
      });
    });
  })
  .optional();

/** `network.egressProxy`, checked as the service (and E2B) check it. */
const egressProxySchema = z
  .strictObject({
    address: z.string().meta({
      description: 'The SOCKS5 proxy, "host:port" (e.g. "proxy.example.com:1080").',
    }),
    username: z
      .string()
      .optional()
      .meta({ description: "RFC 1929 username, at most 255 bytes. Default: none." }),
    password: z.string().optional().meta({
      description:
        "RFC 1929 password, at most 255 bytes, only with a username; sensitive, never shown. Default: none.",
    }),
  })
  .superRefine((cfg, ctx) => {
    const checked = checkEgressProxy(cfg);
    if ("problem" in checked) ctx.addIssue({ code: "custom", message: checked.problem });
  })
  .optional();

/** The Provisioner's `network` input. */
export const provisionerNetworkSchema = z
  .strictObject({
    allowOut: egressList("allowOut").meta({
      description:
        'Destinations always allowed out, winning over denyOut: IPv4 addresses or CIDR blocks ("198.51.100.0/24"), or domain names, exact ("pypi.org") or with one leading wildcard ("*.pythonhosted.org", subdomains only), matched against the TLS SNI or HTTP Host of each flow. Default: none.',
    }),
    denyOut: egressList("denyOut").meta({
      description:
        'IPv4 addresses or CIDR blocks the sandbox may not reach ("0.0.0.0/0" for everything not in allowOut); no domain names, as in E2B. Default: none, everything is reachable.',
    }),
    allowPublicTraffic: z.boolean().optional().meta({
      description:
        "False makes the sandbox's ports answer only requests with its traffic access token. Default: true.",
    }),
    rules: rulesSchema.meta({
      description:
        "Headers set on the sandbox's outbound HTTP(S) requests by domain, at the service's egress edge, as E2B's network.rules (one entry per domain, holding that domain's transform.headers). Rules grant no access: list the domain in allowOut too. Default: none.",
    }),
    egressProxy: egressProxySchema.meta({
      description:
        "A SOCKS5 proxy every outbound TCP flow the rules allow is tunneled through (names resolved by the proxy for flows allowed by name), as E2B's network.egressProxy. Default: none, flows go straight out.",
    }),
  })
  .optional();

/** The Provisioner's `network`, as its args give it. */
type ProvisionerNetwork = NonNullable<z.infer<typeof provisionerNetworkSchema>>;

/** The create body's `network` (E2B's `SandboxNetworkConfig`), the fields this resource sets. */
interface SandboxNetwork {
  allowOut?: string[];
  denyOut?: string[];
  allowPublicTraffic?: boolean;
  rules?: Record<string, Array<{ transform: { headers: Record<string, string> } }>>;
  egressProxy?: { address: string; username?: string; password?: string };
}

/**
 * The create body's `network`, with only the fields given: `rules` becomes
 * E2B's map, each domain's headers its one rule.
 */
export function sandboxNetworkOf(n: ProvisionerNetwork): SandboxNetwork {
  const proxy = n.egressProxy;
  return {
    ...(n.allowOut ? { allowOut: n.allowOut } : {}),
    ...(n.denyOut ? { denyOut: n.denyOut } : {}),
    ...(n.allowPublicTraffic !== undefined ? { allowPublicTraffic: n.allowPublicTraffic } : {}),
    ...(n.rules
      ? {
          rules: Object.fromEntries(
            n.rules.map((r) => [r.domain, [{ transform: { headers: r.headers } }]]),
          ),
        }
      : {}),
    ...(proxy
      ? {
          egressProxy: {
            address: proxy.address,
            ...(proxy.username ? { username: proxy.username } : {}),
            ...(proxy.password ? { password: proxy.password } : {}),
          },
        }
      : {}),
  };
}
