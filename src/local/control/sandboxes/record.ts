/**
 * The persisted record of one sandbox and its wire views (`Sandbox`,
 * `SandboxDetail`, `ListedSandbox` of docs/control-api.md#sandbox-schemas).
 *
 * @module
 */
import type { NetworkRules } from "../../../wire/egress-transforms";
import { egressProxyView, type EgressProxyConfig } from "../../../wire/egress-proxy";
import type { components } from "../../../gen/control.gen";
import { PAUSED_CLIENT_ID } from "../../../wire/control";
import type { ResolvedVolumeMount } from "../volumes/mounts";

/** One lifecycle log entry (`SandboxLogEntry`). */
export interface LifecycleLogEntry {
  timestamp: string;
  level: components["schemas"]["LogLevel"];
  message: string;
  fields: Record<string, string>;
}

/** A sandbox's network settings, as kept in its record. */
export interface SandboxNetwork {
  /**
   * CIDR blocks and domain entries (`api.example.com`, `*.example.com`,
   * lower-cased) always allowed out (wins over `denyOut`).
   */
  allowOut?: string[] | undefined;
  /** CIDR blocks dropped (`0.0.0.0/0` drops everything not in `allowOut`). */
  denyOut?: string[] | undefined;
  /**
   * When false the proxy answers a sandbox port only with the sandbox's
   * `trafficAccessToken` in `e2b-traffic-access-token`.
   * @default true
   */
  allowPublicTraffic?: boolean | undefined;
  /**
   * Per-domain transforms of outbound HTTP(S) requests (keys lower-cased);
   * header values hold `${e2b.secrets.NAME}` placeholders, never values.
   */
  rules?: NetworkRules | undefined;
  /**
   * The SOCKS5 proxy the sandbox's allowed outbound TCP goes through (its
   * password is kept for the edge and never shown: {@link networkView}).
   */
  egressProxy?: EgressProxyConfig | undefined;
  /** The `Host` requests to the sandbox's ports arrive with (`${PORT}`: the port). */
  maskRequestHost?: string | undefined;
}

/** `network` as `GET /sandboxes/:id` shows it: the proxy without its password, as E2B's. */
function networkView(n: SandboxNetwork): Record<string, unknown> {
  const { egressProxy, ...rest } = n;
  return { ...rest, ...(egressProxy ? { egressProxy: egressProxyView(egressProxy) } : {}) };
}

/** Everything the service keeps about a sandbox; persisted in the state file. */
export interface SandboxRecord {
  sandboxID: string;
  templateID: string;
  /** The template build the sandbox started from. */
  buildID?: string | undefined;
  alias?: string | undefined;
  clientID: string;
  startedAt: string;
  endAt: string;
  state: "running" | "paused";
  cpuCount: number;
  memoryMB: number;
  diskSizeMB: number;
  envdVersion: string;
  secure: boolean;
  allowInternetAccess: boolean;
  /** Outbound rules and public-traffic setting; absent: no rules, public ports. */
  network?: SandboxNetwork | undefined;
  autoPause: boolean;
  /**
   * False: a timeout's auto-pause is filesystem-only (processes stopped, the
   * next connect boots again, as `pause` with `memory: false`). Absent (older
   * state files) or true: the pause keeps memory.
   */
  autoPauseMemory?: boolean | undefined;
  autoResume: boolean;
  metadata: Record<string, string>;
  /** The full environment given to the agent's `/init` (template ENV, user envVars, E2B_*). */
  initEnv: Record<string, string>;
  layers: string[];
  defaultUser: string;
  defaultWorkdir?: string | undefined;
  startCmd?: string | undefined;
  /** Volumes mounted into the sandbox, with their host directories. */
  volumeMounts?: ResolvedVolumeMount[] | undefined;
  logs: LifecycleLogEntry[];
}

/**
 * The `Sandbox` body of create, resume, connect and fork; `domain` is where
 * its traffic is served (null: the client's own domain).
 */
export function sandboxView(
  r: SandboxRecord,
  token: string | undefined,
  trafficToken: string | undefined,
  domain: string | null,
): Record<string, unknown> {
  return {
    templateID: r.templateID,
    sandboxID: r.sandboxID,
    clientID: r.state === "paused" ? PAUSED_CLIENT_ID : r.clientID,
    envdVersion: r.envdVersion,
    ...(r.alias ? { alias: r.alias } : {}),
    ...(token ? { envdAccessToken: token } : {}),
    trafficAccessToken: trafficToken ?? null,
    domain,
  };
}

/** The `ListedSandbox` item of the list endpoints. */
export function listedView(r: SandboxRecord): Record<string, unknown> {
  return {
    templateID: r.templateID,
    ...(r.alias ? { alias: r.alias } : {}),
    sandboxID: r.sandboxID,
    clientID: r.state === "paused" ? PAUSED_CLIENT_ID : r.clientID,
    startedAt: r.startedAt,
    endAt: r.endAt,
    cpuCount: r.cpuCount,
    memoryMB: r.memoryMB,
    diskSizeMB: r.diskSizeMB,
    state: r.state,
    envdVersion: r.envdVersion,
    metadata: r.metadata,
    ...(r.volumeMounts?.length
      ? { volumeMounts: r.volumeMounts.map(({ name, path }) => ({ name, path })) }
      : {}),
  };
}

/** The `SandboxDetail` body of `GET /sandboxes/:id` (`domain` as in {@link sandboxView}). */
export function detailView(
  r: SandboxRecord,
  token: string | undefined,
  domain: string | null,
): Record<string, unknown> {
  return {
    ...listedView(r),
    ...(token ? { envdAccessToken: token } : {}),
    allowInternetAccess: r.allowInternetAccess,
    ...(r.network ? { network: networkView(r.network) } : {}),
    domain,
    lifecycle: { autoResume: r.autoResume, onTimeout: r.autoPause ? "pause" : "kill" },
  };
}
