// node bench/agent-start.js [agentDir ...] — the agent's own start, outside
// any sandbox, beside `node -e ""` measured in the same run: spawn -> GET /health
// answered (what a sandbox's cold start waits for), then -> the first RPC
// answered (the full handler loaded), each in wall time and in the agent's CPU
// time (every thread's, from /proc/<pid>/task/*/schedstat, in ns). The agent
// gets its listening socket as descriptor 3 as in a sandbox, so the first
// probe waits in the kernel's backlog, never in a retry loop.
//
// Several agent dirs (e.g. an older build's dist/agent beside this one's) are
// run alternately, so a burst of load weighs on all alike, each with the Node
// flags of its own build (its ../local/agent-launch.js), which its code cache
// was made with.
// AGENT_START_RUNS (default 20) starts per dir.
"use strict";
const { spawn, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const http = require("node:http");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");
const { assertBuildCurrent } = require("./build-current");
const { percentile, ms, timeIt, row } = require("./stats");
const { AGENT_NODE_FLAGS } = require("../dist/local/agent-launch");

const RUNS = Number(process.env.AGENT_START_RUNS ?? 20);

/** The agent's Node flags of the build `dir` (a dist/agent) belongs to. */
function flagsOf(dir) {
  try {
    return require(path.join(dir, "..", "local", "agent-launch.js")).AGENT_NODE_FLAGS;
  } catch {
    return AGENT_NODE_FLAGS;
  }
}

/** CPU ms of every thread of `pid` so far. */
function threadsCpuMs(pid) {
  let ns = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
  }
  return ns / 1e6;
}

function ask(socketPath, method, urlPath, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath, method, path: urlPath, headers, agent: false },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode < 300 ? resolve() : reject(new Error(`${urlPath}: ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** One agent start: { health, rpc } wall ms since spawn and { healthCpu, rpcCpu } ms. */
async function startOnce(dir, scratch) {
  const socketPath = path.join(scratch, "agent.sock");
  const bound = `${socketPath}.tmp`;
  fs.rmSync(socketPath, { force: true });
  const listener = net.createServer();
  await new Promise((resolve) => listener.listen(bound, resolve));
  // Closing our listener unlinks the name it was bound to, not this one (as the service does).
  fs.linkSync(bound, socketPath);
  const fd = listener._handle.fd;
  const t0 = process.hrtime.bigint();
  const since = () => Number(process.hrtime.bigint() - t0) / 1e6;
  const child = spawn(
    process.execPath,
    [...flagsOf(dir), path.join(dir, "agent.js"), "--listen-fd", "3"],
    {
      stdio: ["ignore", "inherit", "inherit", fd],
    },
  );
  listener.close();
  try {
    await ask(socketPath, "GET", "/health");
    const health = since();
    const healthCpu = threadsCpuMs(child.pid);
    await ask(socketPath, "POST", "/init", "{}", { "content-type": "application/json" });
    await ask(socketPath, "POST", "/filesystem.Filesystem/Stat", JSON.stringify({ path: "/" }), {
      "content-type": "application/json",
    });
    const rpc = since();
    const rpcCpu = threadsCpuMs(child.pid);
    return { health, rpc, healthCpu, rpcCpu };
  } finally {
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

async function main() {
  const dirs =
    process.argv.length > 2 ? process.argv.slice(2) : [path.join(__dirname, "..", "dist", "agent")];
  // Each build against the sources of its own checkout (an older build's from its worktree).
  for (const dir of dirs)
    assertBuildCurrent(path.join(dir, "agent.js"), path.resolve(dir, "..", ".."));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "agent-start-"));
  const results = dirs.map(() => ({ health: [], rpc: [], healthCpu: [], rpcCpu: [] }));
  const node = [];
  let nodeCpu = 0;
  const childrenCpuMs = () => {
    const f = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    return (Number(f[13]) + Number(f[14])) * 10;
  };
  try {
    for (let i = 0; i < RUNS; i++) {
      const c0 = childrenCpuMs();
      node.push(await timeIt(async () => spawnSync(process.execPath, ["-e", ""])));
      nodeCpu += childrenCpuMs() - c0;
      for (const [j, dir] of dirs.entries()) {
        const r = await startOnce(dir, scratch);
        for (const k of Object.keys(r)) results[j][k].push(r[k]);
      }
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const load = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const node50 = percentile(node, 50);
  console.log(
    `floor: node -e "" p50 ${ms(node50)}, CPU mean ${ms(nodeCpu / RUNS)} (${RUNS} runs, load ${load})`,
  );
  const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
  for (const [j, dir] of dirs.entries()) {
    const r = results[j];
    console.log(dir);
    row(
      "  spawn -> /health p50",
      ms(percentile(r.health, 50)),
      ms(node50) + " (node)",
      `${(percentile(r.health, 50) / node50).toFixed(2)}x`,
    );
    row(
      "  spawn -> /health CPU mean",
      ms(mean(r.healthCpu)),
      ms(nodeCpu / RUNS) + " (node)",
      `${(mean(r.healthCpu) / (nodeCpu / RUNS)).toFixed(2)}x; p50 ${ms(percentile(r.healthCpu, 50))}`,
    );
    row(
      "  spawn -> first RPC p50",
      ms(percentile(r.rpc, 50)),
      ms(node50) + " (node)",
      `${(percentile(r.rpc, 50) / node50).toFixed(2)}x`,
    );
    row(
      "  spawn -> first RPC CPU mean",
      ms(mean(r.rpcCpu)),
      ms(nodeCpu / RUNS) + " (node)",
      `${(mean(r.rpcCpu) / (nodeCpu / RUNS)).toFixed(2)}x; p50 ${ms(percentile(r.rpcCpu, 50))}`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
