// node bench/commands-run.js (after `npm run build`): `commands.run("true")`
// through the official SDK, wall time and CPU per command, beside
// `bwrap /bin/true` measured in the same run (interleaved). CPU per command:
// the sandbox's cgroup (agent, spawner and the command), the service process
// and this client; bwrap's is its own and its child's (this process's cutime).
// BENCH_RUNS commands (default 200) in BENCH_ROUNDS rounds (default 4).
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { percentile, ms, timeIt, row } = require("./stats");
const { startServiceProcess } = require("./service");
const { BWRAP_TRUE } = require("./floors");
const { Sandbox } = require("e2b");

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime+stime (and the reaped children's, when `children`) of `pid`, in ms. */
function cpuMs(pid, children = false) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = fields.slice(fields.lastIndexOf(")") + 2).split(" ");
  const own = Number(f[11]) + Number(f[12]);
  return (children ? own + Number(f[13]) + Number(f[14]) : own) * TICK_MS;
}

/** The sandbox's CPU accounting file (cgroup v2 cpu.stat, or v1 cpuacct.usage). */
function sandboxCpuFile(sandboxID) {
  const roots = ["/sys/fs/cgroup", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct"];
  const seen = new Set();
  const walk = (dir, depth) => {
    if (depth > 6 || seen.has(dir)) return undefined;
    seen.add(dir);
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const p = path.join(dir, e.name);
      if (e.name.endsWith(sandboxID)) {
        if (fs.existsSync(path.join(p, "cpuacct.usage"))) return path.join(p, "cpuacct.usage");
        const stat = path.join(p, "cpu.stat");
        if (fs.existsSync(stat) && fs.readFileSync(stat, "utf8").includes("usage_usec"))
          return stat;
      }
      const found = walk(p, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  for (const r of roots) {
    const found = walk(r, 0);
    if (found) return found;
  }
  return undefined;
}

/** CPU used so far by the sandbox's cgroup, in ms. */
function sandboxCpuMs(file) {
  const text = fs.readFileSync(file, "utf8");
  if (file.endsWith("cpuacct.usage")) return Number(text.trim()) / 1e6;
  return Number(/usage_usec (\d+)/.exec(text)[1]) / 1e3;
}

async function main() {
  const work = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "sbx-cmdrun-"));
  const service = await startServiceProcess(path.join(work, "data"));
  const opts = { apiKey: service.apiKey, apiUrl: service.apiUrl, sandboxUrl: service.sandboxUrl };
  try {
    const sbx = await Sandbox.create({ ...opts, timeoutMs: 3_600_000 });
    const cpuFile = sandboxCpuFile(sbx.sandboxId);
    for (let i = 0; i < 20; i++) await sbx.commands.run("true");
    const runs = [];
    const bwraps = [];
    let runCpu = { sandbox: 0, service: 0, client: 0 };
    let bwrapCpu = 0;
    const per = Math.ceil(RUNS / ROUNDS);
    for (let round = 0; round < ROUNDS; round++) {
      const s0 = cpuFile ? sandboxCpuMs(cpuFile) : 0;
      const v0 = cpuMs(service.pid);
      const c0 = process.cpuUsage();
      for (let i = 0; i < per; i++) runs.push(await timeIt(() => sbx.commands.run("true")));
      const c = process.cpuUsage(c0);
      runCpu = {
        sandbox: runCpu.sandbox + (cpuFile ? sandboxCpuMs(cpuFile) - s0 : 0),
        service: runCpu.service + cpuMs(service.pid) - v0,
        client: runCpu.client + (c.user + c.system) / 1e3,
      };
      const b0 = cpuMs(process.pid, true) - cpuMs(process.pid);
      for (let i = 0; i < per; i++)
        bwraps.push(
          await timeIt(async () => {
            const r = spawnSync("bwrap", BWRAP_TRUE);
            if (r.status !== 0) throw new Error(`bwrap failed: ${r.stderr}`);
          }),
        );
      bwrapCpu += cpuMs(process.pid, true) - cpuMs(process.pid) - b0;
    }
    const n = runs.length;
    const load = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
    console.log(`commands.run("true"), ${n} runs (${os.cpus().length} cores, load ${load})`);
    const bw50 = percentile(bwraps, 50);
    row(
      'commands.run("true") wall p50',
      ms(percentile(runs, 50)),
      ms(bw50) + " (bwrap)",
      `${(percentile(runs, 50) / bw50).toFixed(2)}x; p95 ${ms(percentile(runs, 95))} vs ${ms(percentile(bwraps, 95))}`,
    );
    const perBwrap = bwrapCpu / bwraps.length;
    row(
      "CPU per command: sandbox (agent+spawner+cmd)",
      ms(runCpu.sandbox / n),
      ms(perBwrap) + " (bwrap)",
      `${(runCpu.sandbox / n / perBwrap).toFixed(2)}x${cpuFile ? "" : " (no cgroup file found)"}`,
    );
    row("CPU per command: service", ms(runCpu.service / n), "", "");
    row("CPU per command: SDK client", ms(runCpu.client / n), "", "");
    await sbx.kill();
  } finally {
    await service.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
