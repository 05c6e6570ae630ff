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

/** CPU time (user + system, ms) of this process's reaped children so far, in clock ticks' precision. */
function childrenCpuMs() {
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of proc(5): cutime and cstime, in USER_HZ (100 on Linux).
  return (Number(f[13]) + Number(f[14])) * 10;
}

/** Runs `file` once: { wall, cpu } in ms (cpu from the children's times, so exact only summed). */
async function run(file, args) {
  const cpu0 = childrenCpuMs();
  const wall = await timeIt(async () => {
    const r = spawnSync(file, args);
    if (r.status !== 0) throw new Error(`${file} failed: ${r.stderr}`);
  });
  return { wall, cpu: childrenCpuMs() - cpu0 };
}

/**
 * `n` samples of each floor, interleaved so that a burst of load on the
 * machine weighs on both alike. Resolves with { bwrap, node } wall-time sample
 * arrays and { bwrapCpu, nodeCpu }, each floor's CPU time summed over its
 * samples (ms): CPU time does not swing with the machine's load the way wall
 * time does, but the kernel counts it in 10 ms ticks, so only sums are exact.
 */
async function measureFloors(n) {
  const floors = { bwrap: [], node: [], bwrapCpu: 0, nodeCpu: 0 };
  for (let i = 0; i < n; i++) {
    const b = await run("bwrap", BWRAP_TRUE);
    const s = await run(process.execPath, ["-e", ""]);
    floors.bwrap.push(b.wall);
    floors.node.push(s.wall);
    floors.bwrapCpu += b.cpu;
    floors.nodeCpu += s.cpu;
  }
  return floors;
}

/** Mean CPU ms of one `bwrap /bin/true` and one `node -e ""` (see measureFloors). */
function floorsCpu(floors) {
  return {
    bwrap: floors.bwrapCpu / Math.max(1, floors.bwrap.length),
    node: floors.nodeCpu / Math.max(1, floors.node.length),
  };
}

/** The floors line every benchmark prints, with the machine's load beside it. */
function floorsLine(floors) {
  const load = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const cpu = floorsCpu(floors);
  return (
    `floors: bwrap /bin/true p50 ${ms(percentile(floors.bwrap, 50))} (p95 ${ms(percentile(floors.bwrap, 95))}, CPU ${ms(cpu.bwrap)}), ` +
    `node -e "" p50 ${ms(percentile(floors.node, 50))} (p95 ${ms(percentile(floors.node, 95))}, CPU ${ms(cpu.node)}); load ${load}`
  );
}

/**
 * Each sandbox's cold start from the service's log: from the launch chain's
 * spawn to the agent answering `GET /health` (the "spawn" and "agent" phases
 * of its "ms since start" line), in ms. Lines from before `fromByte` are left
 * out. `cold.cpu` holds the CPU time the launch chain used by then (its
 * "launch CPU ms", from the sandbox's cgroup), where the line has it.
 */
function coldStarts(logFile, fromByte = 0) {
  const text = fs.readFileSync(logFile, "utf8").slice(fromByte);
  const out = [];
  out.cpu = [];
  for (const m of text.matchAll(/ms since start: ([^\n]*)/g)) {
    const phase = (name) => Number(new RegExp(`(?:^|, )${name} (\\d+)`).exec(m[1])?.[1]);
    const spawned = phase("spawn");
    const agent = phase("agent");
    if (Number.isFinite(spawned) && Number.isFinite(agent)) out.push(agent - spawned);
    const cpu = Number(/launch CPU ms (\d+(?:\.\d+)?)/.exec(m[1])?.[1]);
    if (Number.isFinite(cpu)) out.cpu.push(cpu);
  }
  return out;
}

module.exports = { measureFloors, floorsCpu, floorsLine, coldStarts, BWRAP_TRUE };
