/**
 * Sampling running sandboxes' resource usage into the {@link MetricsStore}:
 * every {@link METRICS_INTERVAL_MS} for all of them, and once at creation so
 * that a running sandbox's metrics are never empty.
 *
 * @module
 */
import type { KnownSandbox } from "./known-sandbox";
import { METRICS_INTERVAL_MS, type MetricsStore } from "./metrics";

/** Adds one sample of `sandbox` when it runs unfrozen; a sandbox stopping meanwhile is skipped. */
export async function sampleSandbox(metrics: MetricsStore, sandbox: KnownSandbox): Promise<void> {
  const processes = sandbox.processes;
  if (!processes || sandbox.frozen || sandbox.record.state !== "running") return;
  try {
    const stats = await processes.stats();
    // Killed meanwhile: its samples were dropped, and must not come back.
    if (!sandbox.gone) metrics.add(sandbox.record.sandboxID, stats);
  } catch {
    // A sandbox stopping between the check and the read has no stats; the next sample will tell.
  }
}

/** Samples every sandbox `sandboxes()` yields, periodically; returns the timer to clear. */
export function startSampling(
  metrics: MetricsStore,
  sandboxes: () => Iterable<KnownSandbox>,
): NodeJS.Timeout {
  const timer = setInterval(() => {
    void (async () => {
      // Sequential: one cgroup read at a time is plenty every 5 s.
      for (const sandbox of [...sandboxes()]) await sampleSandbox(metrics, sandbox);
    })();
  }, METRICS_INTERVAL_MS);
  timer.unref();
  return timer;
}
