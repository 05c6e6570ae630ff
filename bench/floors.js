// The machine's own floors, measured in the same run as the figures they sit
// beside, so a figure read on another machine carries its own yardstick:
// `bwrap /bin/true` (a new set of namespaces, the least a sandbox start can
// cost) and `node -e ""` (one Node start, the least the agent's start costs).
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const { percentile, ms, timeIt } = require("./stats");

const BWRAP_TRUE = [
  "--unshare-all",
  "--die-with-parent",
  "--ro-bind",
  "/usr",
  "/usr",
  "--symlink",
  "usr/bin",
  "/bin",
  "--symlink",
  "usr/lib",
  "/lib",
  "--symlink",
  "usr/lib64",
  "/lib64",
  "--proc",
  "/proc",
  "--dev",
  "/dev",
  "/bin/true",
];

function run(file, args) {
  return timeIt(async () => {
    const r = spawnSync(file, args);
    if (r.status !== 0) throw new Error(`${file} failed: ${r.stderr}`);
  });
}

/**
 * `n` samples of each floor, interleaved so that a burst of load on the
 * machine weighs on both alike. Resolves with { bwrap, node } sample arrays.
 */
async function measureFloors(n) {
  const bwrap = [];
  const node = [];
  for (let i = 0; i < n; i++) {
    bwrap.push(await run("bwrap", BWRAP_TRUE));
    node.push(await run(process.execPath, ["-e", ""]));
  }
  return { bwrap, node };
}

/** The floors line every benchmark prints, with the machine's load beside it. */
function floorsLine(floors) {
  const load = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  return (
    `floors: bwrap /bin/true p50 ${ms(percentile(floors.bwrap, 50))} (p95 ${ms(percentile(floors.bwrap, 95))}), ` +
    `node -e "" p50 ${ms(percentile(floors.node, 50))} (p95 ${ms(percentile(floors.node, 95))}); load ${load}`
  );
}

/**
 * Each sandbox's cold start from the service's log: from the launch chain's
 * spawn to the agent answering `GET /health` (the "spawn" and "agent" phases
 * of its "ms since start" line), in ms. Lines from before `fromByte` are left out.
 */
function coldStarts(logFile, fromByte = 0) {
  const text = fs.readFileSync(logFile, "utf8").slice(fromByte);
  const out = [];
  for (const m of text.matchAll(/ms since start: ([^\n]*)/g)) {
    const phase = (name) => Number(new RegExp(`(?:^|, )${name} (\\d+)`).exec(m[1])?.[1]);
    const spawned = phase("spawn");
    const agent = phase("agent");
    if (Number.isFinite(spawned) && Number.isFinite(agent)) out.push(agent - spawned);
  }
  return out;
}

module.exports = { measureFloors, floorsLine, coldStarts, BWRAP_TRUE };
