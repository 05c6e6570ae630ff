/**
 * E2B's sandbox network options: `network` in the create body
 * (`allowOut`, `denyOut`, `allowPublicTraffic`), `PUT /sandboxes/:id/network`
 * to change the outbound rules of a sandbox, and the traffic access token
 * the proxy then requires for the sandbox's ports.
 *
 * @module
 */
import { z } from "zod";
import { egressEntryProblem, isIpv4Cidr, MAX_EGRESS_RULES } from "../../runtime/egress-rules";
import { normalizeDomainEntry } from "../../../wire/egress-domains";
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
const UNSUPPORTED = ["egressProxy", "rules", "maskRequestHost", "httpsPorts"] as const;

/** `SandboxNetworkConfig` of the create body. */
const networkConfigSchema = z.object({
  allowPublicTraffic: z.boolean().nullish(),
  allowOut: entryList("allowOut"),
  denyOut: entryList("denyOut"),
});

/** The body of `PUT /sandboxes/:id/network`. */
const networkUpdateSchema = z.object({
  allowOut: entryList("allowOut"),
  denyOut: entryList("denyOut"),
  allow_internet_access: z.boolean().nullish(),
});

function refuseUnsupported(raw: unknown, where: string): void {
  if (typeof raw !== "object" || raw === null) return;
  for (const key of UNSUPPORTED) {
    if ((raw as Record<string, unknown>)[key] !== undefined) {
      throw serviceError(
        "invalid_argument",
        `${where}.${key} is not supported by the local service: leave it out (allowOut, denyOut and allowPublicTraffic are)`,
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
    ...(typeof n.allowPublicTraffic === "boolean"
      ? { allowPublicTraffic: n.allowPublicTraffic }
      : {}),
  };
}

/** What `PUT /sandboxes/:id/network` changes. */
export interface NetworkUpdate {
  allowOut: string[];
  denyOut: string[];
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
  m: NetworkManager,
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
        await m.updateNetwork(id, {
          allowOut: body.allowOut ?? [],
          denyOut: body.denyOut ?? [],
          ...(typeof body.allow_internet_access === "boolean"
            ? { allowInternetAccess: body.allow_internet_access }
            : {}),
        });
        return { status: 204 };
      },
    },
  ];
}
