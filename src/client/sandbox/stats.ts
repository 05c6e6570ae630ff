/**
 * Sandbox-level reads of envd: resource metrics, the global environment and
 * health. Reference: docs/envd.md#http-routes.
 *
 * @module
 */
import { ENVD_ROUTES } from "../../wire/envd";
import { OPS } from "./constants";
import type { SandboxContext } from "./context";
import { httpRequest, readJson } from "./http";
import { retryIdempotent } from "./idempotent";

/** Resource usage of the sandbox right now. */
export interface SandboxMetrics {
  /** When the sample was taken. */
  timestamp: Date;
  /** CPUs available to the sandbox. */
  cpuCount: number;
  /** CPU use in percent of all CPUs. */
  cpuUsedPct: number;
  /** Memory limit in bytes. */
  memTotal: number;
  /** Memory in use in bytes. */
  memUsed: number;
  /** Page cache in bytes. */
  memCache: number;
  /** Bytes used on the root filesystem. */
  diskUsed: number;
  /** Size of the root filesystem in bytes. */
  diskTotal: number;
}

/** Options of the sandbox-level reads. */
export interface StatsCallOptions {
  /** Aborts the call. @default none */
  signal?: AbortSignal | undefined;
}

/** The sandbox-level part of the sandbox client. */
export interface StatsApi {
  /** Current resource usage (`GET /metrics`). Retried when transient. */
  metrics(options?: StatsCallOptions): Promise<SandboxMetrics>;
  /** envd's global environment variables (`GET /envs`). Retried when transient. */
  envs(options?: StatsCallOptions): Promise<Record<string, string>>;
  /** True when envd answers; false when the proxy says the sandbox is gone (502). */
  health(options?: StatsCallOptions): Promise<boolean>;
}

/** `GET /metrics` as sent by envd, in snake_case. */
interface WireMetrics {
  ts?: number;
  cpu_count?: number;
  cpu_used_pct?: number;
  mem_total?: number;
  mem_used?: number;
  mem_cache?: number;
  disk_used?: number;
  disk_total?: number;
}

/** Maps envd's snake_case metrics; absent fields (protojson-style omission) are 0. */
function toSandboxMetrics(wire: WireMetrics): SandboxMetrics {
  return {
    timestamp: new Date((wire.ts ?? 0) * 1000),
    cpuCount: wire.cpu_count ?? 0,
    cpuUsedPct: wire.cpu_used_pct ?? 0,
    memTotal: wire.mem_total ?? 0,
    memUsed: wire.mem_used ?? 0,
    memCache: wire.mem_cache ?? 0,
    diskUsed: wire.disk_used ?? 0,
    diskTotal: wire.disk_total ?? 0,
  };
}

/** The proxy's answer for a sandbox that is not running (docs/control-api.md#hosts-and-urls). */
const SANDBOX_GONE_STATUS = 502;

/** Builds the sandbox-level part over a shared context. */
export function createStatsApi(ctx: SandboxContext): StatsApi {
  async function getJson<T>(
    operation: string,
    route: string,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const scope = { operation, sandboxID: ctx.sandboxID };
    return retryIdempotent(async () => {
      const res = await httpRequest(ctx, {
        method: "GET",
        route,
        signal,
        timeoutMs: ctx.timeoutMs,
        scope,
      });
      return readJson<T>(res, scope);
    }, signal);
  }

  return {
    async metrics(options = {}) {
      return toSandboxMetrics(
        await getJson<WireMetrics>(OPS.metrics, ENVD_ROUTES.metrics, options.signal),
      );
    },

    async envs(options = {}) {
      return getJson<Record<string, string>>(OPS.envs, ENVD_ROUTES.envs, options.signal);
    },

    async health(options = {}) {
      const res = await httpRequest(ctx, {
        method: "GET",
        route: ENVD_ROUTES.health,
        signal: options.signal,
        timeoutMs: ctx.timeoutMs,
        scope: { operation: OPS.health, sandboxID: ctx.sandboxID },
        acceptStatuses: [SANDBOX_GONE_STATUS],
      });
      await res.body?.cancel();
      return res.status !== SANDBOX_GONE_STATUS;
    },
  };
}
