// How the soak prints its figures: one row per restart as it happens, then
// the operations per kind, the leak counters at start and end with a verdict,
// and every problem found.
"use strict";
const { COUNTERS, DATA_DIR_COUNTERS } = require("./leaks");

/** Kernel objects must not grow at all; fds and RSS get some slack (lazy allocations). */
function grows(name, first, last) {
  if (name === "fds") return last > first + 8;
  if (name === "rssMiB") return last > first * 1.3 + 10;
  return last > first;
}

/** Short column names of the counters in the per-restart rows. */
const SHORT = {
  mounts: "mnt",
  loops: "loop",
  veths: "veth",
  nftTables: "nft",
  cgroups: "cg",
  fds: "fds",
  rssMiB: "rss",
  orphanSandboxDirs: "oSbx",
  spareLayers: "xLay",
};
const cols = (values, width = 6) => values.map((v) => String(v).padStart(width)).join("");

function printCycleHeader() {
  console.log(
    `\n${"restart".padEnd(8)}${cols(["at min", "ops", "cut"], 7)}  | after restart:${cols(COUNTERS.map((c) => SHORT[c]))}` +
      `  | at kill:${cols(["fds", "rss", "loop"])}  | checked:${cols(["sbx", "files", "volF", "snap", "tpl", "s"])}`,
  );
}

/** One row: a restart, what the counters read after it and at the kill, and what the checks covered (and their seconds). */
function printCycle(row) {
  const v = row.verified;
  console.log(
    `${String(row.cycle).padEnd(8)}${cols([row.atMin.toFixed(1), row.ops, row.cut], 7)}  | ${"".padEnd(13)}${cols(COUNTERS.map((c) => row.after[c]))}` +
      `  | ${"".padEnd(7)}${cols([row.atKill.fds, row.atKill.rssMiB, row.atKill.loops])}` +
      `  | ${"".padEnd(7)}${cols([v.sandboxes, v.files, v.volumeFiles, v.snapshots, v.templates, (row.verifyMs / 1000).toFixed(0)])}`,
  );
}

/** Operations per kind: acknowledged, cut off by a kill, failed while the service was up, skipped. */
function printOps(stats) {
  console.log(
    `\noperations${"ok".padStart(24)}${"cut".padStart(7)}${"failed".padStart(8)}${"skipped".padStart(9)}`,
  );
  let total = 0;
  for (const [kind, s] of [...stats.entries()].sort()) {
    total += s.ok;
    console.log(
      `  ${kind.padEnd(22)}${String(s.ok).padStart(10)}${String(s.cut).padStart(7)}${String(s.failed).padStart(8)}${String(s.skipped).padStart(9)}`,
    );
  }
  console.log(`  ${"total acknowledged".padEnd(22)}${String(total).padStart(10)}`);
  for (const [kind, s] of stats) for (const e of s.errors) console.log(`  failed ${kind}: ${e}`);
}

/** The counters at start and end, and whether each grew over the cycles. */
function printLeaks({ start, rows, end, afterShutdown }) {
  console.log(
    `\nleak counters (ours only)${"start".padStart(10)}${"end".padStart(8)}${"min".padStart(6)}${"max".padStart(6)}  over ${rows.length} restarts`,
  );
  const leaks = [];
  for (const name of COUNTERS) {
    const series = rows.map((r) => r.after[name]);
    const verdict = grows(name, start[name], end[name]) ? "GROWS" : "flat";
    if (verdict === "GROWS") leaks.push(name);
    console.log(
      `  ${name.padEnd(23)}${String(start[name]).padStart(10)}${String(end[name]).padStart(8)}${String(Math.min(...series, start[name])).padStart(6)}${String(Math.max(...series, start[name])).padStart(6)}  ${verdict}`,
    );
  }
  const host = COUNTERS.filter((c) => !["fds", "rssMiB", ...DATA_DIR_COUNTERS].includes(c));
  const left = host.filter((c) => afterShutdown[c] !== 0);
  console.log(
    `  after the last normal shutdown: ${host.map((c) => `${c} ${afterShutdown[c]}`).join(", ")}${left.length ? "  LEFT BEHIND" : ""}`,
  );
  return leaks;
}

/** Every problem, by kind; returns true when one of them fails the soak. */
function printProblems(problems) {
  const labels = {
    lostWrites: "lost writes (acknowledged, then missing or changed)",
    tornWrites: "torn writes (cut-off uploads left partial)",
    lostSandboxes: "lost sandboxes",
    duplicatedSandboxes: "duplicated or unknown sandboxes and snapshots",
    notPausedAfterRestart: "sandboxes not paused after a restart",
  };
  console.log("");
  for (const [kind, label] of Object.entries(labels)) {
    const list = problems[kind];
    console.log(`${label}: ${list.length === 0 ? "none" : list.length}`);
    for (const p of list.slice(0, 20)) console.log(`  ${p}`);
    if (list.length > 20) console.log(`  ... and ${list.length - 20} more`);
  }
  return (
    problems.lostWrites.length +
      problems.tornWrites.length +
      problems.lostSandboxes.length +
      problems.duplicatedSandboxes.length >
    0
  );
}

module.exports = { printCycleHeader, printCycle, printOps, printLeaks, printProblems };
