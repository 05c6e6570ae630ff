/**
 * The tokens a sandbox's answers carry, derived from the service's secret and
 * the sandbox's id (nothing is stored): the envd access token of a secure
 * sandbox, and the traffic access token of one whose ports are not public.
 *
 * @module
 */
import { envdAccessToken, trafficAccessToken } from "../tokens";
import { needsTrafficToken } from "./network";
import type { SandboxRecord } from "./record";

/** The access token of a secure sandbox. */
export function tokenOf(tokenSecret: string, record: SandboxRecord): string | undefined {
  return record.secure ? envdAccessToken(tokenSecret, record.sandboxID) : undefined;
}

/** The traffic access token of a sandbox whose ports are not public. */
export function trafficTokenOf(tokenSecret: string, record: SandboxRecord): string | undefined {
  return needsTrafficToken(record) ? trafficAccessToken(tokenSecret, record.sandboxID) : undefined;
}
