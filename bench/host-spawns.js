// node bench/host-spawns.js — what starting and stopping sandboxes costs the
// service's own process: its CPU time (utime+stime) per sandbox start, beside
// its helpers' (the host spawner, the mount helper), and with BENCH_STRACE=1
// the processes it forks itself and the host commands run per start (strace
// slows everything down: its run gives counts, never times).
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { Sandbox } = require("e2b");
const { startServiceProcess } = require("./service");
const { cpuSeconds } = require("./procs");

const CREATES = Number(process.env.BENCH_CREATES ?? 20);
const STRACE = process.env.BENCH_STRACE === "1";

/** Pids of `pid`'s children (its helpers). */
function childrenOf(pid) {
  return fs
    .readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const stat = fs.readFileSync(`/proc/${n}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Sandbox launches logged since byte `from` of the service's log. */
function launches(logFile, from) {
  const text = fs.readFileSync(logFile, "utf8").slice(from);
  return (text.match(/: pid \d+, host uid /g) ?? []).length;
}

/** Waits until no launch was logged for `quietMs` (the warm pool has refilled). */
async function settled(logFile, from, quietMs = 8000) {
  let last = -1;
  for (;;) {
    const n = launches(logFile, from);
    if (n === last) return n;
    last = n;
    await new Promise((r) => setTimeout(r, quietMs));
  }
}

/** Forks by the service's own threads and the programs exec'd, from strace's output. */
function straceCounts(file, serviceTids) {
  let forks = 0;
  const programs = new Map();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const m = /^(\d+)\s+(clone3?|vfork|fork)\((.*)/.exec(line);
    if (m && serviceTids.has(Number(m[1])) && !m[3].includes("CLONE_THREAD")) forks++;
    const e = /^\d+\s+execve\("([^"]+)"/.exec(line);
    if (e && !line.includes("= -1")) {
      const name = path.basename(e[1]);
      programs.set(name, (programs.get(name) ?? 0) + 1);
    }
  }
  return { forks, programs };
}

async function main() {
  const work = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "sbx-spawns-"));
  const dataDir = path.join(work, "data");
  const service = await startServiceProcess(dataDir);
  const opts = { apiKey: service.apiKey, apiUrl: service.apiUrl, sandboxUrl: service.sandboxUrl };
  const logFile = `${dataDir}.log`;
  try {
    // Warm-up: the first create builds the base layer; then the pool fills.
    await (await Sandbox.create(opts)).kill();
    await settled(logFile, 0);
    const from = fs.statSync(logFile).size;
    const tids = new Set(fs.readdirSync(`/proc/${service.pid}/task`).map(Number));
    let strace;
    const traceFile = path.join(work, "strace.txt");
    if (STRACE) {
      strace = spawn(
        "strace",
        [
          "-f",
          "-qq",
          "-o",
          traceFile,
          "-e",
          "trace=clone,clone3,vfork,fork,execve",
          // The service and its helpers (the host spawner's commands are its children).
          ...[service.pid, ...childrenOf(service.pid)].flatMap((p) => ["-p", String(p)]),
        ],
        { stdio: "ignore" },
      );
      // strace attaches to each thread in turn before tracing.
      await new Promise((r) => setTimeout(r, 2000));
    }
    const helpers = childrenOf(service.pid);
    const cpu = () => ({
      service: cpuSeconds(service.pid),
      helpers: helpers.reduce((sum, p) => sum + (cpuSeconds(p) || 0), 0),
    });
    const c0 = cpu();
    const t0 = Date.now();
    for (let i = 0; i < CREATES; i++) {
      const sbx = await Sandbox.create(opts);
      await sbx.commands.run("true");
      await sbx.kill();
    }
    const starts = await settled(logFile, from);
    const c1 = cpu();
    const wall = (Date.now() - t0) / 1000;
    console.log(
      `host spawns (${os.cpus().length} cores, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}${STRACE ? ", under strace: counts only" : ""})`,
    );
    console.log(
      `${CREATES} creates (create, run "true", kill) in ${wall.toFixed(1)} s: ${starts} sandbox starts (with the pool's refills)`,
    );
    const per = (s) => ((s * 1000) / Math.max(1, starts)).toFixed(1);
    console.log(
      `service process CPU per start: ${per(c1.service - c0.service)} ms; its helpers' (host spawner, mount helper) ${per(c1.helpers - c0.helpers)} ms`,
    );
    if (strace) {
      strace.kill("SIGINT");
      await new Promise((r) => strace.once("exit", r));
      const { forks, programs } = straceCounts(traceFile, tids);
      const listed = [...programs]
        .sort((a, b) => b[1] - a[1])
        .map(([p, n]) => `${p} ${(n / Math.max(1, starts)).toFixed(1)}`)
        .join(", ");
      console.log(
        `forks by the service process: ${forks} (${(forks / Math.max(1, starts)).toFixed(1)} per start)`,
      );
      console.log(`programs exec'd per start (every process, helpers' included): ${listed}`);
    }
  } finally {
    await service.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
