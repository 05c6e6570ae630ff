// The Provisioner's uploads against the official e2b SDK's files.write, both
// against the same local service in the same run, and a no-op re-provision
// against plain hashing of the same tree (docs/benchmarks.md#baselines).
//
// Baselines give the SDK its best honest shot:
// - 1 GiB file: files.write(path, ReadableStream) from fs.createReadStream via
//   Readable.toWeb, which makes the SDK stream one octet-stream request (no
//   buffering of the file in memory, unlike a Blob or ArrayBuffer).
// - 10,000 files: files.write([{ path, data }]) with data = fs.openAsBlob (lazy
//   Blobs, read while sent); several batchings are measured and the fastest
//   one is the baseline.
// - no-op: sha256 of every file (readFile + createHash) with the provisioner's
//   concurrency, over a list made beforehand (listing is not counted). The
//   no-op is a diff after an apply (the local hash cache is warm, as it is
//   after any apply); before it is timed, an edit that keeps size and mtime
//   is made and must be found.
// - one file changed: an update of the live sandbox after one file of the
//   tree got new content, against the no-op.
//
// Each copy of the tree (SDK or Provisioner) goes to a fresh directory, as it
// would in a new sandbox (see the comment in the tree section).
//
// Sizes: BENCH_PROV_BIG_MIB (1024), BENCH_PROV_FILES (10000), BENCH_PROV_RUNS (3);
// BENCH_PROV_SKIP_BIG=1 leaves the big file out and BENCH_PROV_SKIP_SDK=1 the
// SDK's copies of the tree (while iterating on a shared CPU).
//
// The service runs as its own process (`sandbox-iac serve`, as users run it),
// so the CPU of each side is its own: the tree's rows print the client's,
// the service's, the agent's and the sandbox's commands' (tar) CPU seconds.
"use strict";
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { Readable } = require("node:stream");
const { ms, mbps, timeIt, row } = require("./stats");
const { measureFloors, floorsLine } = require("./floors");
const { startServiceProcess } = require("./service");
const { cpuMeter, cpuLine } = require("./procs");
const { provisionerLifecycle } = require("../dist/resources/provisioner");
const { resolveConfig } = require("../dist/config");
const { Sandbox } = require("e2b");
const tar = require("tar");

const BIG_MIB = Number(process.env.BENCH_PROV_BIG_MIB ?? 1024);
const FILES = Number(process.env.BENCH_PROV_FILES ?? 10_000);
const RUNS = Number(process.env.BENCH_PROV_RUNS ?? 3);
const SKIP_BIG = process.env.BENCH_PROV_SKIP_BIG === "1";
const SKIP_SDK = process.env.BENCH_PROV_SKIP_SDK === "1";
const DIRS = 100;
/** The Provisioner's default `concurrency`, used for the hashing baseline too. */
const CONCURRENCY = 8;

function median(samples) {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

/** The median of each field of `records` (objects with the same numeric fields). */
function medianOf(records) {
  return Object.fromEntries(
    Object.keys(records[0] ?? {}).map((k) => [k, median(records.map((r) => r[k]))]),
  );
}

/** A file of `mib` MiB of random bytes (not compressible, not constant). */
function makeBigFile(file, mib) {
  const fd = fs.openSync(file, "w");
  const chunk = Buffer.allocUnsafe(1 << 20);
  for (let i = 0; i < mib; i++) fs.writeSync(fd, crypto.randomFillSync(chunk));
  fs.closeSync(fd);
}

/** `count` files of 1 to 8 KiB of random bytes spread over DIRS directories; returns their relative paths. */
function makeTree(root, count) {
  const rel = [];
  for (let d = 0; d < DIRS; d++)
    fs.mkdirSync(path.join(root, `dir${String(d).padStart(3, "0")}`), { recursive: true });
  for (let i = 0; i < count; i++) {
    const p = path.join(
      `dir${String(i % DIRS).padStart(3, "0")}`,
      `file${String(i).padStart(5, "0")}.dat`,
    );
    fs.writeFileSync(
      path.join(root, p),
      crypto.randomBytes(1024 + ((i * 2654435761) % (7 * 1024 + 1))),
    );
    rel.push(p);
  }
  return rel;
}

async function mapLimit(items, limit, fn) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  });
  await Promise.all(lanes);
}

async function hashTree(files) {
  await mapLimit(files, CONCURRENCY, async (f) =>
    crypto
      .createHash("sha256")
      .update(await fs.promises.readFile(f))
      .digest("hex"),
  );
}

/** sha256 of `file`, read through one 1 MiB buffer (not the whole file in memory, whose garbage a timed run would collect). */
function sha256File(file) {
  const hash = crypto.createHash("sha256");
  const fd = fs.openSync(file, "r");
  const chunk = Buffer.allocUnsafe(1 << 20);
  try {
    for (let n; (n = fs.readSync(fd, chunk)) > 0;) hash.update(chunk.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest("hex");
}

async function sdkTree(sbx, root, rel, dest, batch, parallel) {
  const batches = [];
  for (let i = 0; i < rel.length; i += batch) batches.push(rel.slice(i, i + batch));
  await mapLimit(batches, parallel, async (b) => {
    const entries = await Promise.all(
      b.map(async (p) => ({ path: `${dest}/${p}`, data: await fs.openAsBlob(path.join(root, p)) })),
    );
    await sbx.files.write(entries, { requestTimeoutMs: 0 });
  });
}

/**
 * Marks the phases of one Provisioner run from its log lines: wall time and
 * CPU per process (client, service, agent, sandbox's commands) between the
 * run's start, "uploading N files in one archive" (the archive's stream
 * opens), "uploaded ..." (tar -x done, modes set) and the run's end.
 */
function phaseRecorder(meter) {
  const t0 = performance.now();
  const marks = [{ name: "start", t: t0, cpu: { client: 0, service: 0, agent: 0, rest: 0 } }];
  const used = meter.start();
  const at = (name) => marks.push({ name, t: performance.now(), cpu: used() });
  return {
    marks,
    mark(line) {
      if (/^uploading \d+\+? files in one archive/.test(line)) at("archive opens");
      else if (/^uploaded \d+ file/.test(line)) at("uploaded");
    },
    end() {
      at("end");
      return marks[marks.length - 1].cpu;
    },
  };
}

/** Prints each run's phases: wall ms and CPU seconds per process between marks. */
function printPhases(runs) {
  const s = (v) => (Number.isFinite(v) ? v.toFixed(2) : "n/a");
  runs.forEach((run, i) => {
    const parts = [];
    for (let k = 1; k < run.marks.length; k++) {
      const a = run.marks[k - 1];
      const b = run.marks[k];
      parts.push(
        `${a.name} -> ${b.name} ${(b.t - a.t).toFixed(0)} ms ` +
          `(cpu s: client ${s(b.cpu.client - a.cpu.client)}, service ${s(b.cpu.service - a.cpu.service)}, ` +
          `agent ${s(b.cpu.agent - a.cpu.agent)}, tar ${s(b.cpu.rest - a.cpu.rest)})`,
      );
    }
    console.log(`    phases, run ${i}${i === 0 ? " (cold hash cache)" : ""}: ${parts.join("; ")}`);
  });
}

/**
 * The client's own share, without the sandbox: listing and hashing the tree
 * (cold cache, then warm) and packing and framing its archive to nowhere.
 */
async function packAlone(inputs, baseDir) {
  const { buildManifest } = require("../dist/resources/provisioner/manifest");
  const { packChunks } = require("../dist/resources/provisioner/archive-pack");
  const { HashCache } = require("../dist/resources/provisioner/hash-cache");
  const { stdinFrame } = require("../dist/wire/stdin-frame");
  const cpuOf = async (fn) => {
    const c0 = process.cpuUsage();
    const t = await timeIt(fn);
    const c = process.cpuUsage(c0);
    return `${t.toFixed(0)} ms (cpu ${((c.user + c.system) / 1e6).toFixed(2)} s)`;
  };
  let manifest;
  const cold = await cpuOf(async () => {
    manifest = await buildManifest(inputs.files, baseDir, { cache: HashCache.none() });
  });
  const warmCache = HashCache.open(baseDir);
  const warm = await cpuOf(async () => {
    await buildManifest(inputs.files, baseDir, { cache: warmCache });
  });
  // Framed as the stdin transport frames each chunk (in place: src/wire/stdin-frame.ts).
  const pack = await cpuOf(async () => {
    for await (const chunk of packChunks(manifest.files)) stdinFrame(chunk);
  });
  console.log(
    `    client alone: list+hash ${cold}; list+stat (warm cache) ${warm}; pack and frame the archive ${pack}`,
  );
}

async function main() {
  const work = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "sbx-bench-prov-"));
  const service = await startServiceProcess(path.join(work, "data"));
  const opts = { apiKey: service.apiKey, apiUrl: service.apiUrl, sandboxUrl: service.sandboxUrl };
  const ctx = { config: resolveConfig(opts), baseDir: work, log: () => undefined };
  // The hash cache goes with the benchmark's files, not into the user's cache.
  process.env.SANDBOX_IAC_CACHE_DIR = path.join(work, "cache");
  let sbx;
  try {
    console.log(
      `sandbox-iac provisioner benchmark (${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB), medians of ${RUNS}`,
    );
    console.log(floorsLine(await measureFloors(10)));
    const big = path.join(work, "big.bin");
    if (!SKIP_BIG) makeBigFile(big, BIG_MIB);
    const tree = path.join(work, "tree");
    const rel = makeTree(tree, FILES);
    const absolute = rel.map((p) => path.join(tree, p));
    const treeBytes = absolute.reduce((n, f) => n + fs.statSync(f).size, 0);

    sbx = await Sandbox.create({ ...opts, timeoutMs: 3_600_000 });
    const sandboxID = sbx.sandboxId;
    const meter = cpuMeter(service.pid, sandboxID);
    // Removes both copies and flushes the disk: a measurement must not pay for
    // the writeback of the one before it.
    const clean = () =>
      sbx.commands.run("rm -rf /home/user/sdk /home/user/prov && sync", { timeoutMs: 0 });

    // 1. One big file.
    const bigBytes = BIG_MIB * 2 ** 20;
    const bigInputs = {
      sandboxID,
      files: [{ source: big, destination: "/home/user/prov/big.bin" }],
    };
    const sdkBig = [];
    const provBig = [];
    const sdkBigCpu = [];
    const provBigCpu = [];
    const want = SKIP_BIG ? "" : sha256File(big);
    // The first run's copy is checked against the local file.
    const check = async (remote) => {
      const sum = await sbx.commands.run(`sha256sum ${remote}`, { timeoutMs: 0 });
      if (!sum.stdout.startsWith(want)) throw new Error(`uploaded content differs: ${sum.stdout}`);
    };
    // Each side starts from the same sandbox: both copies removed and synced.
    // The Provisioner's runs used to remove only their own copy, so they wrote
    // with the SDK's copy in the sandbox's page cache, charged to its memory
    // limit (512 MiB: their peak usage reached it, the SDK's stayed near 305
    // MiB with 256 MiB files), a reclaim the SDK's runs never paid.
    const timed = async (times, cpus, upload) => {
      await clean();
      const used = meter.start();
      times.push(await timeIt(upload));
      cpus.push(used());
    };
    for (let i = 0; i < (SKIP_BIG ? 0 : RUNS); i++) {
      const sdk = async () => {
        await timed(sdkBig, sdkBigCpu, () =>
          sbx.files.write(
            "/home/user/sdk/big.bin",
            Readable.toWeb(fs.createReadStream(big, { highWaterMark: 1 << 20 })),
            { requestTimeoutMs: 0 },
          ),
        );
        if (i === 0) await check("/home/user/sdk/big.bin");
      };
      const prov = async () => {
        await timed(provBig, provBigCpu, () => provisionerLifecycle.create(bigInputs, ctx));
        if (i === 0) await check("/home/user/prov/big.bin");
      };
      // Alternating which goes first, so neither always follows the other.
      if (i % 2 === 0) {
        await sdk();
        await prov();
      } else {
        await prov();
        await sdk();
      }
    }
    await clean();
    if (!SKIP_BIG) {
      const sdkBigMs = median(sdkBig);
      const provBigMs = median(provBig);
      const r = sdkBigMs / provBigMs;
      row(
        `upload ${BIG_MIB} MiB file`,
        mbps(bigBytes, provBigMs / 1000),
        mbps(bigBytes, sdkBigMs / 1000) + " (sdk)",
        `${r.toFixed(2)}x the SDK's single stream, target >= 1.0x: ${r >= 1 ? "met" : "MISSED"}`,
      );
      // The Provisioner's includes hashing the file on the first run (later runs hit the hash cache).
      console.log(`    cpu, provisioner (medians): ${cpuLine(medianOf(provBigCpu))}`);
      console.log(`    cpu, sdk (medians):         ${cpuLine(medianOf(sdkBigCpu))}`);
    }

    // 2. The tree: find the SDK's fastest batching first.
    const variants = [
      { name: `all ${FILES} in one request`, batch: FILES, parallel: 1 },
      { name: "500 per request, sequential", batch: 500, parallel: 1 },
      { name: `500 per request, ${CONCURRENCY} in parallel`, batch: 500, parallel: CONCURRENCY },
    ];
    // Every copy of the tree goes to a directory of its own, never to one a
    // previous copy was deleted from: ext4 on the sandbox's disk image creates
    // 10,000 files in 0.3 s on fresh ground but takes 2-6 s right after as many
    // were deleted and synced, a cost neither side would pay in a new sandbox.
    const sdkTreeMs = new Map();
    const treeInputsAt = (run) => ({
      sandboxID,
      files: [{ source: tree, destination: `/home/user/prov/run${run}/tree` }],
    });
    let treeInputs = treeInputsAt(0);
    const provTree = [];
    const provCpu = [];
    const provPhases = [];
    let outputs;
    // What bounds the tree: creating its files in the sandbox, timed as the
    // extraction alone of an archive of it already there (one command). Each
    // run's floor is taken next to its Provisioner run (in turns, which goes
    // first), both after a sync: taken after all of them, the floor met
    // another state of the sandbox's disk (3 runs' writeback behind it, or
    // none), and came out at 240 to 430 ms on one machine in one hour.
    const tarFile = path.join(work, "tree.tar");
    await tar.c({ cwd: tree, portable: true, file: tarFile }, ["."]);
    await sbx.files.write(
      "/home/user/tree.tar",
      Readable.toWeb(fs.createReadStream(tarFile, { highWaterMark: 1 << 20 })),
      { requestTimeoutMs: 0 },
    );
    const extracts = [];
    const extractCpu = [];
    const sync = () => sbx.commands.run("sync", { timeoutMs: 0 });
    const floorRun = async (i) => {
      await sbx.commands.run(`mkdir -p /home/user/x/${i}`, { timeoutMs: 0 });
      await sync();
      const used = meter.start();
      extracts.push(
        await timeIt(() =>
          sbx.commands.run(`tar -x -m -f /home/user/tree.tar -C /home/user/x/${i}`, {
            timeoutMs: 0,
          }),
        ),
      );
      extractCpu.push(used());
    };
    await clean();
    for (let i = 0; i < RUNS; i++) {
      for (const [k, v] of SKIP_SDK ? [] : variants.entries()) {
        const t = await timeIt(() =>
          sdkTree(sbx, tree, rel, `/home/user/sdk/run${i}-${k}/tree`, v.batch, v.parallel),
        );
        sdkTreeMs.set(v.name, [...(sdkTreeMs.get(v.name) ?? []), t]);
      }
      if (i % 2 === 1) await floorRun(i);
      treeInputs = treeInputsAt(i);
      // The first run hashes every file (cold hash cache, as a first apply
      // without a plan); later ones find the hashes in the cache.
      await sync();
      const phases = phaseRecorder(meter);
      provTree.push(
        await timeIt(
          async () =>
            ({ outputs } = await provisionerLifecycle.create(treeInputs, {
              ...ctx,
              log: phases.mark,
            })),
        ),
      );
      provCpu.push(phases.end());
      provPhases.push(phases);
      if (i % 2 === 0) await floorRun(i);
    }
    const treeDir = treeInputs.files[0].destination;
    const count = await sbx.commands.run(`find ${treeDir} -type f | wc -l`);
    if (Number(count.stdout.trim()) !== FILES)
      throw new Error(`expected ${FILES} files in the sandbox, found ${count.stdout.trim()}`);
    const sdkBest = [...sdkTreeMs.entries()]
      .map(([name, t]) => ({ name, ms: median(t) }))
      .sort((a, b) => a.ms - b.ms);
    for (const v of sdkBest) row(`  sdk files.write: ${v.name}`, ms(v.ms), "-");
    const provTreeMs = median(provTree);
    await sbx.commands.run("rm -rf /home/user/x /home/user/tree.tar", { timeoutMs: 0 });
    const floorMs = median(extracts);
    row(`  floor: tar -x of the tree in the sandbox`, ms(floorMs), "-");
    console.log(`    cpu (medians): ${cpuLine(medianOf(extractCpu))}`);
    const floorRatio = provTreeMs / floorMs;
    row(
      `upload ${FILES} files (${(treeBytes / 2 ** 20).toFixed(0)} MiB)`,
      ms(provTreeMs),
      ms(floorMs) + " (tar -x)",
      `${floorRatio.toFixed(2)}x the in-sandbox tar -x floor, target <= 2x: ${floorRatio <= 2 ? "met" : "MISSED"}`,
    );
    console.log(`    cpu (medians): ${cpuLine(medianOf(provCpu))}`);
    printPhases(provPhases);
    await packAlone(treeInputs, work);
    if (!SKIP_SDK) {
      const treeRatio = sdkBest[0].ms / provTreeMs;
      row(
        `upload ${FILES} files, against the SDK`,
        ms(provTreeMs),
        ms(sdkBest[0].ms) + " (sdk)",
        `${treeRatio.toFixed(2)}x the SDK (${sdkBest[0].name}), target >= 3x: ${treeRatio >= 3 ? "met" : "MISSED"}`,
      );
    }

    // 3. No-op re-provision: diff finds nothing, so update is never called.
    // First, an edit keeping size and mtime must not pass for a no-op.
    const diffOptions = { baseDir: work };
    const victim = absolute[Math.floor(absolute.length / 2)];
    const original = fs.readFileSync(victim);
    const before = fs.statSync(victim);
    fs.writeFileSync(victim, crypto.randomBytes(original.length));
    fs.utimesSync(victim, before.atime, before.mtime);
    const edited = await provisionerLifecycle.diff(outputs, treeInputs, diffOptions);
    if (!edited.changes) throw new Error("an edit keeping size and mtime went unnoticed");
    fs.writeFileSync(victim, original);
    const restored = await provisionerLifecycle.diff(outputs, treeInputs, diffOptions);
    if (restored.changes) throw new Error("the restored file still counts as changed");
    const diffs = [];
    const hashes = [];
    for (let i = 0; i < RUNS; i++) {
      hashes.push(await timeIt(() => hashTree(absolute)));
      diffs.push(
        await timeIt(async () => {
          const d = await provisionerLifecycle.diff(outputs, treeInputs, diffOptions);
          if (d.changes)
            throw new Error(`a no-op re-provision found changes: ${JSON.stringify(d)}`);
        }),
      );
    }
    const diffMs = median(diffs);
    const hashMs = median(hashes);
    row(
      `no-op re-provision of ${FILES} files`,
      ms(diffMs),
      ms(hashMs) + " (hash)",
      `${(diffMs / hashMs).toFixed(2)}x hashing, target <= 1.1x: ${diffMs / hashMs <= 1.1 ? "met" : "MISSED"}`,
    );

    // 4. One file of the tree changed: an update of the live sandbox.
    const updates = [];
    for (let i = 0; i < RUNS; i++) {
      const file = absolute[(i * 7919) % absolute.length];
      const content = crypto.randomBytes(fs.statSync(file).size);
      fs.writeFileSync(file, content);
      updates.push(
        await timeIt(async () => {
          outputs = await provisionerLifecycle.update(sandboxID, outputs, treeInputs, ctx);
        }),
      );
      if (outputs.bytesUploaded !== content.length)
        throw new Error(`one changed file uploaded ${outputs.bytesUploaded} bytes`);
      const remote = `${treeDir}/${rel[(i * 7919) % rel.length]}`;
      const sum = await sbx.commands.run(`sha256sum ${remote}`);
      const want = crypto.createHash("sha256").update(content).digest("hex");
      if (!sum.stdout.startsWith(want)) throw new Error(`${remote} was not updated`);
    }
    const updateMs = median(updates);
    row(
      `one file of ${FILES} changed`,
      ms(updateMs),
      ms(diffMs) + " (no-op)",
      `${(updateMs / diffMs).toFixed(2)}x the no-op, target <= 2x: ${updateMs / diffMs <= 2 ? "met" : "MISSED"}`,
    );
  } finally {
    if (sbx) await sbx.kill().catch(() => undefined);
    await service.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
