// Small statistics and formatting helpers shared by the benchmarks.
"use strict";

function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

function ms(n) {
  return `${n.toFixed(1)} ms`;
}

function mbps(bytes, seconds) {
  return `${(bytes / 1e6 / seconds).toFixed(0)} MB/s`;
}

async function timeIt(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function row(name, ours, baseline, extra = "") {
  console.log(
    `${name.padEnd(44)} ${String(ours).padStart(14)}   baseline ${String(baseline).padStart(14)}${extra ? `   ${extra}` : ""}`,
  );
}

module.exports = { percentile, ms, mbps, timeIt, row };
