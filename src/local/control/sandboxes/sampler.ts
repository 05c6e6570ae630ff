/**
 * Sampling running sandboxes' resource usage into the {@link MetricsStore}:
 * every {@link METRICS_INTERVAL_MS} for all of them, and once at creation so
 * that a running sandbox's metrics are never empty.
 *
 * @module
 */
import type { Live } from "./known-sandbox";
import { METRICS_INTERVAL_MS, type MetricsStore } from "./metrics";

/** Adds one sample of `l` when it runs unfrozen; a sandbox stopping meanwhile is skipped. */
export async function sampleLive(metrics: MetricsStore, l: Live): Promise<void> {
  const rt = l.rt;
  if (!rt || l.frozen || l.record.state !== "running") return;
  try {
    metrics.add(l.record.sandboxID, await rt.stats());
  } catch {
    // A sandbox stopping between the check and the read has no stats; the next sample will tell.
  }
}

/** Samples every sandbox `lives()` yields, periodically; returns the timer to clear. */
export function startSampling(metrics: MetricsStore, lives: () => Iterable<Live>): NodeJS.Timeout {
  const timer = setInterval(() => {
    void (async () => {
      // Sequential: one cgroup read at a time is plenty every 5 s.
      for (const l of [...lives()]) await sampleLive(metrics, l);
    })();
  }, METRICS_INTERVAL_MS);
  timer.unref();
  return timer;
}
