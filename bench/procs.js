// CPU time per process of a benchmark run: the client (this process), the
// service (its own process), a sandbox's agent, and the rest of the sandbox
// (its cgroup's usage minus the agent's: the commands it ran, e.g. tar).
"use strict";
const fs = require("node:fs");

/** CPU seconds (user + system) `pid` has used so far, or NaN when unknown. */
function cpuSeconds(pid) {
  if (!pid) return NaN;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime, in USER_HZ ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * Pids of the agents of the sandboxes `ids`: a `/.sandbox-iac/node` process
 * whose bwrap ancestor was started with `--hostname <id>` (pool members and
 * other services' sandboxes are left out).
 */
function agentPids(ids) {
  const parent = new Map();
  const cmd = new Map();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      cmd.set(Number(name), fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0"));
    } catch {
      // gone meanwhile
    }
  }
  const wanted = new Set(ids);
  const out = [];
  for (const [pid, argv] of cmd) {
    if (argv[0] !== "/.sandbox-iac/node") continue;
    for (let p = parent.get(pid); p && p > 1; p = parent.get(p)) {
      const a = cmd.get(p) ?? [];
      const i = a.indexOf("--hostname");
      if (i < 0) continue;
      if (wanted.has(a[i + 1])) out.push(pid);
      break;
    }
  }
  return out;
}

/**
 * The CPU accounting of the cgroup `pid` is in: cgroup v2's `cpu.stat`
 * (usage_usec), else cgroup v1's `cpuacct.usage` (ns); undefined when neither
 * is readable.
 */
function cgroupCpuStat(pid) {
  try {
    const lines = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n");
    const v1 = lines.find((l) => /^\d+:([^:]*,)?cpuacct(,[^:]*)?:/.test(l));
    if (v1) {
      const dir = v1.split(":")[1];
      const file = `/sys/fs/cgroup/${dir}${v1.slice(v1.indexOf(":", v1.indexOf(":") + 1) + 1)}/cpuacct.usage`;
      fs.accessSync(file, fs.constants.R_OK);
      return { file, seconds: (text) => Number(text.trim()) / 1e9 };
    }
    const line = lines.find((l) => l.startsWith("0::"));
    const file = `/sys/fs/cgroup${line.slice(3)}/cpu.stat`;
    fs.accessSync(file, fs.constants.R_OK);
    return {
      file,
      seconds: (text) => {
        const m = /usage_usec (\d+)/.exec(text);
        return m ? Number(m[1]) / 1e6 : NaN;
      },
    };
  } catch {
    return undefined;
  }
}

function cgroupSeconds(cgroup) {
  if (!cgroup) return NaN;
  return cgroup.seconds(fs.readFileSync(cgroup.file, "utf8"));
}

/**
 * A meter of the CPU the client, the service (pid `servicePid`) and the
 * sandbox `sandboxID` use: `start()` returns a function that gives the
 * seconds each used since.
 */
function cpuMeter(servicePid, sandboxID) {
  const [agent] = agentPids([sandboxID]);
  const cgroup = agent ? cgroupCpuStat(agent) : undefined;
  return {
    agent,
    cgroup,
    start() {
      const c0 = process.cpuUsage();
      const s0 = cpuSeconds(servicePid);
      const a0 = cpuSeconds(agent);
      const g0 = cgroupSeconds(cgroup);
      return () => {
        const c = process.cpuUsage(c0);
        const agentS = cpuSeconds(agent) - a0;
        return {
          client: (c.user + c.system) / 1e6,
          service: cpuSeconds(servicePid) - s0,
          agent: agentS,
          rest: cgroupSeconds(cgroup) - g0 - agentS,
        };
      };
    },
  };
}

/** "client 0.41 s, service 0.12 s, agent 0.20 s, sandbox's commands 0.33 s". */
function cpuLine(cpu) {
  const s = (v) => (Number.isFinite(v) ? `${v.toFixed(2)} s` : "n/a");
  return `client ${s(cpu.client)}, service ${s(cpu.service)}, agent ${s(cpu.agent)}, sandbox's commands (tar, sh) ${s(cpu.rest)}`;
}

/** The pids of every process below `pid` (children, theirs, ...), sorted. */
function descendants(pid) {
  const children = new Map();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  for (let todo = [pid]; todo.length > 0;) {
    const next = children.get(todo.pop()) ?? [];
    out.push(...next);
    todo.push(...next);
  }
  return out.sort((a, b) => a - b);
}

/**
 * Waits until the service `servicePid` is settled: over `windows` windows of
 * `windowMs` in a row, its own CPU moved by at most one clock tick and its
 * processes (sandboxes, the warm pool's members) stayed the same, so no start
 * or refill is running. Resolves with the ms waited, or NaN when it did not
 * settle within `maxMs` (the figures taken then say so).
 */
async function untilSettled(servicePid, { windowMs = 500, windows = 2, maxMs = 60_000 } = {}) {
  const t0 = Date.now();
  let quiet = 0;
  let before = { cpu: cpuSeconds(servicePid), procs: descendants(servicePid).join(",") };
  while (Date.now() - t0 < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const now = { cpu: cpuSeconds(servicePid), procs: descendants(servicePid).join(",") };
    const idle = now.cpu - before.cpu <= 0.01 && now.procs === before.procs;
    quiet = idle ? quiet + 1 : 0;
    before = now;
    if (quiet >= windows) return Date.now() - t0;
  }
  return NaN;
}

module.exports = { cpuSeconds, agentPids, cpuMeter, cpuLine, untilSettled };
