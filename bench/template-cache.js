// npm run bench:template-cache — a fully cached rebuild of a three-step
// template through the official SDK's Template.build (issue 20's target:
// under 1 s), beside a floor measured in the same run: Template.build of a
// template with no steps, i.e. the same SDK calls (create, start, status
// polls every 200 ms) with nothing to look up or run.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { percentile, ms, timeIt, row } = require("./stats");
const { startServiceProcess } = require("./service");
const { Template } = require("e2b");

const ROUNDS = Number(process.env.BENCH_CACHE_ROUNDS ?? 5);

async function main() {
  const work = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "sbx-bench-"));
  const service = await startServiceProcess(path.join(work, "data"));
  const opts = {
    apiKey: service.apiKey,
    apiUrl: service.apiUrl,
    sandboxUrl: service.sandboxUrl,
    cpuCount: 1,
    memoryMB: 512,
  };
  try {
    console.log(
      `sandbox-iac template cache benchmark (${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB)`,
    );
    const three = Template()
      .fromTemplate("base")
      .runCmd("echo one > ~/one")
      .runCmd("echo two > ~/two")
      .runCmd("echo three > ~/three");
    const none = Template().fromTemplate("base");
    const first = await timeIt(() => Template.build(three, "bench-cache-three", opts));
    await Template.build(none, "bench-cache-none", opts);
    const cached = [];
    const floor = [];
    // Alternating, so that load on the machine weighs on both alike.
    for (let i = 0; i < ROUNDS; i++) {
      cached.push(await timeIt(() => Template.build(three, "bench-cache-three", opts)));
      floor.push(await timeIt(() => Template.build(none, "bench-cache-none", opts)));
    }
    row(
      `cached rebuild, 3 steps (p50 of ${ROUNDS})`,
      ms(percentile(cached, 50)),
      ms(percentile(floor, 50)) + " (0 steps)",
      `target < 1000 ms; first build ${ms(first)}`,
    );
  } finally {
    await service.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
