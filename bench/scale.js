// The "live sandboxes" rows of `npm run bench:local`: BENCH_LIVE sandboxes
// (default 200) alive at once, each answering commands.run, with what each
// one costs in memory and what the service holds for them.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const { percentile, ms, timeIt, row } = require("./stats");
const { Sandbox } = require("e2b");
const { agentPids } = require("./procs");

const LIVE = Number(process.env.BENCH_LIVE ?? 200);
/** Creates (and kills) in flight at once: enough to keep both cores busy, not more. */
const PARALLEL = Number(process.env.BENCH_LIVE_PARALLEL ?? 4);
/** Commands per sandbox once all are alive. */
const ROUNDS = 2;
const MIB = 2 ** 20;

function procStatus(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return "";
  }
}

function kib(status, field) {
  const m = new RegExp(`${field}:\\s+(\\d+)`).exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/** Proportional set size: shared pages (the node binary, the bundle) split between their users. */
function pssOf(pid) {
  try {
    const m = /Pss:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * PSS of an idle `node -e` (a started Node that loaded nothing) taken while
 * the agents are alive, so that it shares the Node binary's pages with them
 * as they share them with each other: the floor of an agent's PSS.
 */
async function idleNodePss() {
  const child = spawn(
    process.execPath,
    ["-e", "process.stdout.write('up'); setInterval(() => {}, 1e9)"],
    {
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  try {
    await new Promise((resolve, reject) => {
      child.stdout.once("data", resolve);
      child.once("error", reject);
    });
    return pssOf(child.pid);
  } finally {
    child.kill("SIGKILL");
  }
}

/** Runs `fn` over `items`, `limit` at a time. */
async function pool(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

const mib = (n) => `${(n / MIB).toFixed(1)} MiB`;

/**
 * Starts LIVE sandboxes, keeps them all alive while each runs `true`, prints
 * the rows, and kills every sandbox it started (also when a step fails).
 */
async function liveRows({ opts, service }) {
  // Baseline: the same commands on one sandbox while it is the only one.
  const solo = await Sandbox.create({ ...opts, timeoutMs: 600_000 });
  const soloRuns = [];
  try {
    for (let i = 0; i < 3; i++) await solo.commands.run("true");
    for (let i = 0; i < LIVE * ROUNDS && i < 200; i++)
      soloRuns.push(await timeIt(() => solo.commands.run("true")));
  } finally {
    await solo.kill();
  }

  const rssBefore = kib(procStatus(service.pid), "VmRSS");
  const fdsBefore = fs.readdirSync(`/proc/${service.pid}/fd`).length;
  const live = [];
  let createMs = 0;
  try {
    createMs = await timeIt(() =>
      pool(Array.from({ length: LIVE }), PARALLEL, async () => {
        live.push(await Sandbox.create({ ...opts, timeoutMs: 3_600_000 }));
      }),
    );
    const runs = [];
    /** Each sandbox's first command pays its agent's cold code paths (a create that missed the pool). */
    const later = [];
    for (let round = 0; round < ROUNDS; round++)
      for (const sbx of live) {
        const t = await timeIt(() => sbx.commands.run("true"));
        runs.push(t);
        if (round > 0) later.push(t);
      }
    // Every sandbox answered above; now sample what they cost while all are alive.
    const agents = agentPids(live.map((s) => s.sandboxId));
    const agentRss = agents.map((pid) => kib(procStatus(pid), "VmRSS"));
    const agentPss = agents.map(pssOf);
    const metrics = await pool(live, 8, (s) => s.getMetrics());
    const cgroupMem = metrics.map((m) => (m.length ? m[m.length - 1].memUsed : 0));
    const avg = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const serviceRss = kib(procStatus(service.pid), "VmRSS");
    const fds = fs.readdirSync(`/proc/${service.pid}/fd`).length;

    row(
      `${LIVE} live: commands.run("true") p95`,
      ms(percentile(runs, 95)),
      ms(percentile(soloRuns, 95)) + " (1 live)",
      `p50 ${ms(percentile(runs, 50))}, p95 without first commands ${ms(percentile(later, 95))}, target p95 <= 100 ms`,
    );
    row(
      `${LIVE} live: create all (${PARALLEL} at a time)`,
      `${(createMs / 1000).toFixed(1)} s`,
      "-",
      `${ms(createMs / LIVE)} per sandbox`,
    );
    const idleNode = await idleNodePss();
    row(
      `${LIVE} live: agent PSS avg`,
      mib(avg(agentPss)),
      mib(idleNode) + " (idle node)",
      `${(avg(agentPss) / idleNode).toFixed(2)}x, target <= 15 MiB; RSS avg ${mib(avg(agentRss))} (${agents.length} agents)`,
    );
    row(`${LIVE} live: cgroup memory avg (no cache)`, mib(avg(cgroupMem)), "-");
    row(
      `${LIVE} live: service RSS`,
      mib(serviceRss),
      mib(rssBefore) + " (before)",
      `${mib((serviceRss - rssBefore) / LIVE)} and ${((fds - fdsBefore) / LIVE).toFixed(1)} fds per sandbox`,
    );
  } finally {
    await pool(live, PARALLEL, (s) => s.kill().catch(() => undefined));
  }
}

module.exports = { liveRows, LIVE };
