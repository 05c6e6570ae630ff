/**
 * The measured fields of the control API's `SandboxMetric`
 * (docs/control-api.md#sandbox-endpoints), listed once: the local service
 * answers them from its samples, and the `sandboxMetrics` data source copies
 * them from the service's answer.
 *
 * @module
 */

/** What one metric sample measured, without its time. */
export interface SandboxMetricMeasures {
  cpuCount: number;
  /** CPU use since the previous sample, 0..100 x cpuCount normalised to 0..100. */
  cpuUsedPct: number;
  /** Bytes of memory used (the local service: cgroup usage minus page cache). */
  memUsed: number;
  /** Bytes of memory allowed (the local service: the cgroup limit). */
  memTotal: number;
  /** Bytes of page cache charged to the sandbox. */
  memCache: number;
  /** Bytes written to the sandbox's writable layer. */
  diskUsed: number;
  /** Bytes available to the sandbox's disk. */
  diskTotal: number;
}

/** The measures of `sample` in the wire's order, and nothing else it carries. */
export function sandboxMetricMeasures(sample: SandboxMetricMeasures): SandboxMetricMeasures {
  return {
    cpuCount: sample.cpuCount,
    cpuUsedPct: sample.cpuUsedPct,
    memUsed: sample.memUsed,
    memTotal: sample.memTotal,
    memCache: sample.memCache,
    diskUsed: sample.diskUsed,
    diskTotal: sample.diskTotal,
  };
}
