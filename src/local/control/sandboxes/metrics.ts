/**
 * Resource metrics of sandboxes: samples from `RuntimeSandbox.stats()` kept
 * in memory for about an hour, and their two wire shapes (the control API's
 * `SandboxMetric` and envd's snake_case `/metrics`, docs/envd.md#http-routes).
 *
 * @module
 */
import { sandboxMetricMeasures } from "../../../wire/sandbox-metric";
import type { SandboxStats } from "../../runtime/types";

/** Seconds between two samples of a running sandbox. */
export const METRICS_INTERVAL_MS = 5_000;
/** Samples kept per sandbox: one hour at one every 5 s. */
const MAX_SAMPLES = 720;

/** In-memory ring of samples per sandbox. */
export class MetricsStore {
  private readonly samples = new Map<string, SandboxStats[]>();
  /** A sandbox's first sample while it is read (create answers before it is in). */
  private readonly first = new Map<string, Promise<void>>();

  /**
   * `sampling` takes `sandboxID`'s first sample: {@link settled} waits for
   * it, so a running sandbox's metrics are never empty, while its create
   * answers without waiting for the cgroup reads.
   */
  firstSample(sandboxID: string, sampling: Promise<void>): void {
    const p = sampling.finally(() => {
      if (this.first.get(sandboxID) === p) this.first.delete(sandboxID);
    });
    this.first.set(sandboxID, p);
  }

  /** Resolves once the first sample of each of `sandboxIDs` being taken is in. */
  async settled(sandboxIDs: Iterable<string>): Promise<void> {
    for (const id of sandboxIDs) await this.first.get(id);
  }

  /** Records one sample. */
  add(sandboxID: string, stats: SandboxStats): void {
    let list = this.samples.get(sandboxID);
    if (!list) {
      list = [];
      this.samples.set(sandboxID, list);
    }
    list.push(stats);
    if (list.length > MAX_SAMPLES) list.splice(0, list.length - MAX_SAMPLES);
  }

  /** Samples with `start <= timestampUnix <= end`, oldest first. */
  range(sandboxID: string, start: number, end: number): SandboxStats[] {
    return (this.samples.get(sandboxID) ?? []).filter(
      (s) => s.timestampUnix >= start && s.timestampUnix <= end,
    );
  }

  /** The newest sample, if any. */
  latest(sandboxID: string): SandboxStats | undefined {
    const list = this.samples.get(sandboxID);
    return list?.[list.length - 1];
  }

  /** Forgets a sandbox. */
  drop(sandboxID: string): void {
    this.samples.delete(sandboxID);
    this.first.delete(sandboxID);
  }
}

/** The control API's `SandboxMetric`. */
export function sandboxMetricView(s: SandboxStats): Record<string, unknown> {
  return {
    timestamp: new Date(s.timestampUnix * 1000).toISOString(),
    timestampUnix: s.timestampUnix,
    ...sandboxMetricMeasures(s),
  };
}

/** envd's `GET /metrics` body. */
export function envdMetricsView(s: SandboxStats): Record<string, unknown> {
  const mib = 1024 * 1024;
  return {
    ts: s.timestampUnix,
    cpu_count: s.cpuCount,
    cpu_used_pct: Math.round(s.cpuUsedPct * 100) / 100,
    mem_total_mib: Math.floor(s.memTotal / mib),
    mem_used_mib: Math.floor(s.memUsed / mib),
    mem_total: s.memTotal,
    mem_used: s.memUsed,
    mem_cache: s.memCache,
    disk_used: s.diskUsed,
    disk_total: s.diskTotal,
  };
}
