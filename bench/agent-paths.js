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
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// BENCH_ONLY=down,meta,compose runs only those sections (all by default).
const ONLY = new Set((process.env.BENCH_ONLY ?? "down,meta,compose").split(","));

async function main() {
  const work = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "sbx-paths-"));
  const service = await startServiceProcess(path.join(work, "data"));
  const opts = { apiKey: service.apiKey, apiUrl: service.apiUrl, sandboxUrl: service.sandboxUrl };
  try {
    console.log(`agent byte paths (${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)})`);
    const sbx = await Sandbox.create({ ...opts, timeoutMs: 3_600_000 });

    if (ONLY.has("down")) await downloads(sbx);
    if (ONLY.has("meta")) await metadata(sbx);
    if (ONLY.has("compose")) await compose(sbx, service);
    await sbx.kill();
  } finally {
    await service.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function downloads(sbx) {
  const bytes = DOWN_MIB * 2 ** 20;
  // Random (incompressible) bytes, the case that crawled.
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
}

async function metadata(sbx) {
  // Stat p50 and ListDir of a directory with ENTRIES files.
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
}

async function compose(sbx, service) {
  // Against cp of the same bytes inside the sandbox, alternating, each timed
  // step starting from a synced disk so neither pays the other's writeback.
  const client = createSandboxClient({
    sandboxID: sbx.sandboxId,
    accessToken: sbx.envdAccessToken,
    baseUrl: service.sandboxUrl,
  });
  const parts = [0, 1, 2, 3].map((i) => `/home/user/part${i}`);
  const plain = [];
  const composed = [];
  const sh = (cmd) => sbx.commands.run(cmd, { timeoutMs: 600_000 });
  for (let round = 0; round < ROUNDS; round++) {
    await sh(`head -c ${4 * PART_MIB}M /dev/zero > /home/user/base.src && sync`);
    plain.push(await timeIt(() => sh("cp /home/user/base.src /home/user/base.copy")));
    await sh("rm -f /home/user/base.src /home/user/base.copy && sync");
    for (const p of parts) await sh(`head -c ${PART_MIB}M /dev/zero > ${p}`);
    await sh("sync");
    composed.push(await timeIt(() => client.compose(parts, "/home/user/joined.bin")));
    await sh("rm -f /home/user/joined.bin && sync");
  }
  const partBytes = 4 * PART_MIB * 2 ** 20;
  const plainSec = percentile(plain, 50) / 1000;
  const composeSec = percentile(composed, 50) / 1000;
  row(
    `compose 4 x ${PART_MIB} MiB (p50 of ${ROUNDS})`,
    mbps(partBytes, composeSec),
    mbps(partBytes, plainSec) + " (cp)",
    `${((plainSec / composeSec) * 100).toFixed(0)}% of plain copy; ms cp ${plain.map((t) => t.toFixed(0)).join("/")} compose ${composed.map((t) => t.toFixed(0)).join("/")}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
