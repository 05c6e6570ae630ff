// node bench/agent-paths.js (after `npm run build`): the in-sandbox agent's byte
// paths through the official SDK on the hardened runtime, each beside a
// baseline measured in the same run: downloads (default options and
// `gzip: true`), file metadata (Stat p50, ListDir of ~1000 entries) and
// compose against `cp` in the sandbox.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const zlib = require("node:zlib");
const { randomBytes } = require("node:crypto");
const { percentile, ms, mbps, timeIt, row } = require("./stats");
const { startServiceProcess } = require("./service");
const { createSandboxClient } = require("../dist/client/sandbox");
const { Sandbox } = require("e2b");

const DOWN_MIB = Number(process.env.BENCH_DOWN_MIB ?? 64);
const PART_MIB = Number(process.env.BENCH_PART_MIB ?? 64);
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1000);
const STATS = Number(process.env.BENCH_STATS ?? 200);

async function main() {
  const work = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "sbx-paths-"));
  const service = await startServiceProcess(path.join(work, "data"));
  const opts = { apiKey: service.apiKey, apiUrl: service.apiUrl, sandboxUrl: service.sandboxUrl };
  try {
    console.log(`agent byte paths (${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)})`);
    const sbx = await Sandbox.create({ ...opts, timeoutMs: 3_600_000 });
    const bytes = DOWN_MIB * 2 ** 20;

    // Downloads: random (incompressible) bytes, the case that crawled.
    await sbx.commands.run(`head -c ${DOWN_MIB}M /dev/urandom > /home/user/rand.bin`);
    const sample = randomBytes(bytes);
    const zlibSec = (await timeIt(async () => zlib.gzipSync(sample))) / 1000;
    const identSec =
      (await timeIt(() =>
        sbx.files.read("/home/user/rand.bin", { format: "bytes", requestTimeoutMs: 600_000 }),
      )) / 1000;
    const streamSec =
      (await timeIt(async () => {
        const s = await sbx.files.read("/home/user/rand.bin", {
          format: "stream",
          requestTimeoutMs: 600_000,
        });
        for await (const _ of s);
      })) / 1000;
    const gzSec =
      (await timeIt(() =>
        sbx.files.read("/home/user/rand.bin", {
          format: "bytes",
          gzip: true,
          requestTimeoutMs: 600_000,
        }),
      )) / 1000;
    row(`SDK files.read ${DOWN_MIB} MiB (bytes, default)`, mbps(bytes, identSec), "-");
    row(`SDK files.read ${DOWN_MIB} MiB (stream, default)`, mbps(bytes, streamSec), "-");
    row(
      `SDK files.read ${DOWN_MIB} MiB (gzip: true)`,
      mbps(bytes, gzSec),
      mbps(bytes, zlibSec) + " (zlib.gzipSync)",
      `${((zlibSec / gzSec) * 100).toFixed(0)}% of zlib`,
    );

    // Metadata: Stat p50 and ListDir of a directory with ENTRIES files.
    await sbx.commands.run(
      `mkdir -p /home/user/many && cd /home/user/many && seq 1 ${ENTRIES} | xargs touch`,
    );
    await sbx.files.write("/home/user/stat.txt", "x");
    const statTimes = [];
    for (let i = 0; i < STATS; i++)
      statTimes.push(await timeIt(() => sbx.files.getInfo("/home/user/stat.txt")));
    const listTimes = [];
    for (let i = 0; i < 10; i++)
      listTimes.push(await timeIt(() => sbx.files.list("/home/user/many")));
    row(`Stat p50 (files.getInfo, ${STATS} calls)`, ms(percentile(statTimes, 50)), "-");
    row(`ListDir ${ENTRIES} entries p50 (files.list)`, ms(percentile(listTimes, 50)), "-");

    // Compose against cp of the same bytes inside the sandbox.
    const parts = [];
    for (let i = 0; i < 4; i++) {
      await sbx.commands.run(`head -c ${PART_MIB}M /dev/zero > /home/user/part${i}`);
      parts.push(`/home/user/part${i}`);
    }
    const client = createSandboxClient({
      sandboxID: sbx.sandboxId,
      accessToken: sbx.envdAccessToken,
      baseUrl: service.sandboxUrl,
    });
    await sbx.commands.run(`cat ${parts.join(" ")} > /home/user/base.src`);
    const plainSec =
      (await timeIt(() => sbx.commands.run("cp /home/user/base.src /home/user/base.copy"))) / 1000;
    await sbx.commands.run("rm -f /home/user/base.src /home/user/base.copy");
    const composeSec = (await timeIt(() => client.compose(parts, "/home/user/joined.bin"))) / 1000;
    const partBytes = 4 * PART_MIB * 2 ** 20;
    row(
      `compose 4 x ${PART_MIB} MiB`,
      mbps(partBytes, composeSec),
      mbps(partBytes, plainSec) + " (cp)",
      `${((plainSec / composeSec) * 100).toFixed(0)}% of plain copy`,
    );
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
