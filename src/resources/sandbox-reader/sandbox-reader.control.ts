/**
 * The control-API calls the SandboxReader resource makes, as a narrow port
 * over the typed control client.
 *
 * @module
 */
import { createControlClient, type SandboxDetail } from "../../client/control";
import { unlessNotFound } from "../core/not-found";
import type { ResourceContext } from "../core/lifecycle";
import type { SandboxReaderMetrics } from "./sandbox-reader.args";

/** The control calls of the SandboxReader resource. Every call throws `SandboxIacError`. */
export interface SandboxReaderControl {
  /** `undefined` when the sandbox does not exist. */
  getSandbox(sandboxID: string): Promise<SandboxDetail | undefined>;
  /** The newest metric sample, `undefined` when there is none. */
  latestMetrics(sandboxID: string): Promise<SandboxReaderMetrics | undefined>;
}

/** Builds the port from the resource context (the control client over `ctx.config`). */
export function sandboxReaderControl(ctx: ResourceContext): SandboxReaderControl {
  const client = createControlClient({ config: ctx.config });
  const options = ctx.signal ? { signal: ctx.signal } : {};
  return {
    getSandbox: (sandboxID) => unlessNotFound(client.getSandbox(sandboxID, options), undefined),
    async latestMetrics(sandboxID) {
      const samples = await client.getSandboxMetrics(sandboxID, {}, options);
      // The newest sample; the service returns them oldest first, but do not rely on it.
      const latest = [...samples].sort((a, b) => b.timestampUnix - a.timestampUnix)[0];
      if (!latest) return undefined;
      const { timestampUnix, cpuCount, cpuUsedPct, memUsed, memTotal, diskUsed, diskTotal } =
        latest;
      return { timestampUnix, cpuCount, cpuUsedPct, memUsed, memTotal, diskUsed, diskTotal };
    },
  };
}
