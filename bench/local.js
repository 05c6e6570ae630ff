// npm run bench:local — the local sandbox service against the machine's own
// floors, each baseline measured in the same run (docs/benchmarks.md#baselines).
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { percentile, ms, mbps, timeIt, row } = require("./stats");
const { startServiceProcess } = require("./service");
const { transferRows, agentSocketOf } = require("./transfer");
const { createSandboxClient } = require("../dist/client/sandbox");
const { Sandbox } = require("e2b");
const { liveRows } = require("./scale");
const { measureFloors, floorsCpu, floorsLine, coldStarts } = require("./floors");
const { cpuSeconds, cpuMeter, untilSettled } = require("./procs");
const { traceCreates, poolTraceLines } = require("./pool-trace");

const CREATES = Number(process.env.BENCH_CREATES ?? 50);
const BIG_MIB = Number(process.env.BENCH_BIG_MIB ?? 512);
const PART_MIB = Number(process.env.BENCH_PART_MIB ?? 256);
const COMPOSE_ROUNDS = Number(process.env.BENCH_COMPOSE_ROUNDS ?? 3);
const SETTLED_RUNS = Number(process.env.BENCH_SETTLED_RUNS ?? 50);
// BENCH_COLD_ONLY=1: only the floors, the cold start and the create/command rows (a few minutes, not the transfers).
const COLD_ONLY = process.env.BENCH_COLD_ONLY === "1";

async function main() {
  const work = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "sbx-bench-"));
  const service = await startServiceProcess(path.join(work, "data"));
  const opts = { apiKey: service.apiKey, apiUrl: service.apiUrl, sandboxUrl: service.sandboxUrl };
  try {
    console.log(
      `sandbox-iac local benchmark (${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB)`,
    );
    // Warm-up: the first create builds the base layer.
    await (await Sandbox.create(opts)).kill();

    // Floors before and after the creates, so both halves of the run are in them.
    const before = await measureFloors(Math.ceil(CREATES / 2));
    const logFile = `${path.join(work, "data")}.log`;
    const logFrom = fs.statSync(logFile).size;
    const creates = [];
    const createCalls = [];
    const firstRuns = [];
    const runs = [];
    // Each create's sandbox and start time, to class it from the service's log (pool-trace.js).
    const traced = [];
    // The service's own CPU over the loop (creates, first commands, kills and the pool's
    // refills): unlike wall times, the machine's load does not stretch it.
    const serviceCpu0 = cpuSeconds(service.pid);
    const load0 = os.loadavg()[0];
    for (let i = 0; i < CREATES; i++) {
      let sbx;
      const startedAt = Date.now();
      creates.push(
        await timeIt(async () => {
          createCalls.push(await timeIt(async () => (sbx = await Sandbox.create(opts))));
          firstRuns.push(await timeIt(() => sbx.commands.run("true")));
        }),
      );
      traced.push({
        index: i,
        id: sbx.sandboxId,
        startedAt,
        total: creates[i],
        createCall: createCalls[i],
        firstRun: firstRuns[i],
      });
      if (i < 10)
        for (let j = 0; j < 10; j++) runs.push(await timeIt(() => sbx.commands.run("true")));
      await sbx.kill();
    }
    const serviceCpuPerCreate = ((cpuSeconds(service.pid) - serviceCpu0) * 1000) / CREATES;
    const loadDuring = `load ${load0.toFixed(1)} -> ${os.loadavg()[0].toFixed(1)}`;
    const settled = await settledRuns(opts, service.pid);
    const after = await measureFloors(Math.ceil(CREATES / 2));
    const floors = {
      bwrap: [...before.bwrap, ...after.bwrap],
      node: [...before.node, ...after.node],
      bwrapCpu: before.bwrapCpu + after.bwrapCpu,
      nodeCpu: before.nodeCpu + after.nodeCpu,
    };
    const bwrap50 = percentile(floors.bwrap, 50);
    const startFloor = bwrap50 + percentile(floors.node, 50);
    // Every launch of the run: the pool's refills and any create that missed it.
    const cold = coldStarts(logFile, logFrom);
    console.log(floorsLine(floors));
    row(
      "agent cold start p50 (spawn -> /health)",
      ms(percentile(cold, 50)),
      ms(startFloor) + " (bwrap+node)",
      `${(percentile(cold, 50) / startFloor).toFixed(2)}x, target <= 1.5x; p95 ${ms(percentile(cold, 95))} (${cold.length} starts)`,
    );
    // The same start in CPU time, which the machine's load does not stretch: wall ratios swing 3-4x.
    const floorCpu = floorsCpu(floors);
    const coldCpu = cold.cpu.reduce((a, b) => a + b, 0) / Math.max(1, cold.cpu.length);
    row(
      "agent cold start CPU mean (launch chain)",
      ms(coldCpu),
      ms(floorCpu.bwrap + floorCpu.node) + " (bwrap+node)",
      `${(coldCpu / (floorCpu.bwrap + floorCpu.node)).toFixed(2)}x; p50 ${ms(percentile(cold.cpu, 50))} (${cold.cpu.length} starts)`,
    );
    row(
      "create -> first command p50",
      ms(percentile(creates, 50)),
      ms(bwrap50) + " (bwrap)",
      `${(percentile(creates, 50) / bwrap50).toFixed(2)}x, target <= 3x bwrap`,
    );
    // Where a create -> first command goes: the create call, then the command.
    row(
      "  of which Sandbox.create p50",
      ms(percentile(createCalls, 50)),
      ms(bwrap50) + " (bwrap)",
      `${(percentile(createCalls, 50) / bwrap50).toFixed(2)}x, p95 ${ms(percentile(createCalls, 95))}`,
    );
    row(
      "  of which first commands.run p50",
      ms(percentile(firstRuns, 50)),
      ms(bwrap50) + " (bwrap)",
      `${(percentile(firstRuns, 50) / bwrap50).toFixed(2)}x, p95 ${ms(percentile(firstRuns, 95))}`,
    );
    row(
      "create -> first command p95",
      ms(percentile(creates, 95)),
      ms(percentile(cold, 50)) + " (cold p50)",
      `target <= the cold start's p50 (${CREATES} creates in a row)`,
    );
    for (const line of poolTraceLines(traceCreates(logFile, logFrom, traced))) console.log(line);
    row(
      "  service CPU per create (own, whole loop)",
      ms(serviceCpuPerCreate),
      ms(floorCpu.bwrap + floorCpu.node) + " (bwrap+node)",
      `create, first command, kill and the pool's refill; ${loadDuring}`,
    );
    row(
      'commands.run("true") p50',
      ms(percentile(runs, 50)),
      ms(bwrap50) + " (bwrap)",
      `${(percentile(runs, 50) / bwrap50).toFixed(2)}x, p95 ${ms(percentile(runs, 95))}, target p50 <= 1x bwrap`,
    );
    // The rows above run right after each create, while the pool refills with cold starts on the same cores.
    row(
      'commands.run("true") p50, settled sandbox',
      ms(percentile(settled.runs, 50)),
      ms(bwrap50) + " (bwrap)",
      `${(percentile(settled.runs, 50) / bwrap50).toFixed(2)}x, p95 ${ms(percentile(settled.runs, 95))}, ` +
        (Number.isFinite(settled.waitedMs)
          ? `pool full and idle after ${(settled.waitedMs / 1000).toFixed(1)} s`
          : "the service never went idle (60 s)"),
    );
    row(
      "  CPU per settled command (sandbox+service)",
      ms(settled.cpu.sandbox + settled.cpu.service),
      ms(floorCpu.bwrap) + " (bwrap)",
      `${((settled.cpu.sandbox + settled.cpu.service) / floorCpu.bwrap).toFixed(2)}x; sandbox ${ms(settled.cpu.sandbox)} (agent ${ms(settled.cpu.agent)}), service ${ms(settled.cpu.service)}, SDK client ${ms(settled.cpu.client)}`,
    );

    if (COLD_ONLY) return;

    const sbx = await Sandbox.create({ ...opts, timeoutMs: 3_600_000 });
    const client = createSandboxClient({
      sandboxID: sbx.sandboxId,
      accessToken: sbx.envdAccessToken,
      baseUrl: service.sandboxUrl,
    });
    await transferRows({
      work,
      mib: BIG_MIB,
      sbx,
      client,
      agentSocket: agentSocketOf(path.join(work, "data"), sbx.sandboxId),
      accessToken: sbx.envdAccessToken,
      servicePid: service.pid,
    });

    // Compose against cp of the same bytes inside the sandbox, alternating over
    // COMPOSE_ROUNDS. Each timed step reads sources written just before it and
    // starts from a synced disk, so neither pays for the other's writeback or
    // reads sources the other pushed out of the sandbox's page cache (the disk
    // is a loop-mounted image; either effect alone swung the ratio 20-480%).
    await sbx.commands.run("rm -f /home/user/big.bin");
    const parts = [0, 1, 2, 3].map((i) => `/home/user/part${i}`);
    const partBytes = 4 * PART_MIB * 2 ** 20;
    const sh = (cmd) => sbx.commands.run(cmd, { timeoutMs: 600_000 });
    const plainTimes = [];
    const composeTimes = [];
    for (let round = 0; round < COMPOSE_ROUNDS; round++) {
      await sh(`head -c ${4 * PART_MIB}M /dev/zero > /home/user/base.src && sync`);
      plainTimes.push(await timeIt(() => sh("cp /home/user/base.src /home/user/base.copy")));
      await sh("rm -f /home/user/base.src /home/user/base.copy && sync");
      for (const p of parts) await sh(`head -c ${PART_MIB}M /dev/zero > ${p}`);
      await sh("sync");
      composeTimes.push(await timeIt(() => client.compose(parts, "/home/user/joined.bin")));
      await sh("rm -f /home/user/joined.bin && sync");
    }
    const plainSec = percentile(plainTimes, 50) / 1000;
    const composeSec = percentile(composeTimes, 50) / 1000;
    row(
      `compose 4 x ${PART_MIB} MiB (p50 of ${COMPOSE_ROUNDS})`,
      mbps(partBytes, composeSec),
      mbps(partBytes, plainSec) + " (cp)",
      `${((plainSec / composeSec) * 100).toFixed(0)}% of plain copy, target >= 90%`,
    );
    await sbx.kill();

    await liveRows({ opts, service });
  } finally {
    await service.close();
    // BENCH_KEEP_LOG=<file>: the service's log (every start's phases, the pool's claims) is kept there.
    if (process.env.BENCH_KEEP_LOG)
      fs.copyFileSync(`${path.join(work, "data")}.log`, process.env.BENCH_KEEP_LOG);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `commands.run("true")` in a settled sandbox: created, then, once the pool is
 * full again and the service idle (untilSettled), a few runs to warm up and
 * SETTLED_RUNS measured ones. Resolves with their wall times (ms), the wait
 * (ms, NaN when the service never settled) and the mean CPU ms per command
 * of the sandbox (its cgroup: agent, spawner, the command), of which the
 * agent, the service and this client.
 */
async function settledRuns(opts, servicePid) {
  const sbx = await Sandbox.create(opts);
  try {
    const waitedMs = await untilSettled(servicePid);
    for (let i = 0; i < 5; i++) await sbx.commands.run("true");
    const meter = cpuMeter(servicePid, sbx.sandboxId);
    const since = meter.start();
    const runs = [];
    for (let i = 0; i < SETTLED_RUNS; i++) runs.push(await timeIt(() => sbx.commands.run("true")));
    const used = since();
    const per = (s) => (s * 1000) / SETTLED_RUNS;
    const cpu = {
      sandbox: per(used.agent + used.rest),
      agent: per(used.agent),
      service: per(used.service),
      client: per(used.client),
    };
    return { runs, waitedMs, cpu };
  } finally {
    await sbx.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
