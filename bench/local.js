// npm run bench:local — the local sandbox service against the machine's own
// floors, each baseline measured in the same run (docs/benchmarks.md#baselines).
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { percentile, ms, mbps, timeIt, row } = require("./stats");
const { startServiceProcess } = require("./service");
const { transferRows, agentSocketOf } = require("./transfer");
const { createSandboxClient } = require("../dist/client/sandbox");
const { Sandbox } = require("e2b");
const { liveRows } = require("./scale");

const CREATES = Number(process.env.BENCH_CREATES ?? 50);
const BIG_MIB = Number(process.env.BENCH_BIG_MIB ?? 512);
const PART_MIB = Number(process.env.BENCH_PART_MIB ?? 256);
const COMPOSE_ROUNDS = Number(process.env.BENCH_COMPOSE_ROUNDS ?? 3);

function bareBwrap() {
  return timeIt(async () => {
    const r = spawnSync("bwrap", [
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
    ]);
    if (r.status !== 0) throw new Error(`bwrap failed: ${r.stderr}`);
  });
}

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

    const bare = [];
    for (let i = 0; i < CREATES; i++) bare.push(await bareBwrap());
    const creates = [];
    const runs = [];
    for (let i = 0; i < CREATES; i++) {
      let sbx;
      creates.push(
        await timeIt(async () => {
          sbx = await Sandbox.create(opts);
          await sbx.commands.run("true");
        }),
      );
      if (i < 10)
        for (let j = 0; j < 10; j++) runs.push(await timeIt(() => sbx.commands.run("true")));
      await sbx.kill();
    }
    row(
      "create -> first command p50",
      ms(percentile(creates, 50)),
      ms(percentile(bare, 50)) + " (bwrap)",
      "target <= 50 ms",
    );
    row(
      "create -> first command p95",
      ms(percentile(creates, 95)),
      ms(percentile(bare, 95)) + " (bwrap)",
      `target <= 100 ms (${CREATES} creates in a row)`,
    );
    row(
      'commands.run("true") p50',
      ms(percentile(runs, 50)),
      ms(percentile(bare, 50)) + " (bwrap)",
      `p95 ${ms(percentile(runs, 95))}, target p50 <= 8 ms`,
    );

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
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
