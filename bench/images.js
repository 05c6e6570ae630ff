// npm run bench:images — templates from container images (issue 20), each
// figure beside a floor measured in the same run:
//
// - First build from a ~200 MB two-layer image: the official SDK's
//   Template.build(fromImage) against `sandbox-iac serve` (a fresh data dir
//   each round, so nothing is unpacked yet) and a loopback `docker-registry`,
//   vs. the floor: `skopeo copy` of the same image to a local OCI directory
//   plus `tar -x` of each of its layers. Target: at most 1.5x the floor.
//   Where the service's time goes is read from its build log's timestamps.
// - Disk: two images sharing their base layer, both built on one service:
//   the bytes of the service's layer store beside the size of the shared layer.
//
// The images are made offline (busybox, incompressible and compressible
// files, umoci) and kept with the registry's storage under
// BENCH_IMAGES_CACHE (default: <tmp>/sbx-bench-images), so reruns skip that.
// BENCH_IMAGES_ROUNDS (default 3) sets the rounds; BENCH_KEEP_LOGS=1 keeps
// the services' logs in <cache>/logs.
"use strict";
const { execFile, execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { promisify } = require("node:util");
const { ms, percentile, timeIt, row } = require("./stats");
const { startServiceProcess } = require("./service");
const reg = require("../scripts/local-registry");
const { makeImages, layoutManifest } = require("./image-fixture");
const { Template } = require("e2b");

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_IMAGES_ROUNDS ?? 3);
const CACHE = process.env.BENCH_IMAGES_CACHE ?? path.join(os.tmpdir(), "sbx-bench-images");
const BIG = "bench/big:v1";
const OTHER = "bench/other:v1";

const t0 = Date.now();
const say = (line) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`);
const uptime = () => execFileSync("uptime").toString().trim();

/** How many sandboxes the service starts for its warm pool of `base` right after its start. */
const WARM_POOL_AT_START = 2;

/**
 * Waits (at most 180 s) until the service's log shows its warm pool's
 * sandboxes started: they start right after the ready line, and a build
 * timed meanwhile would share the CPU with them, which the floor does not.
 */
async function settled(dataDir) {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const log = fs.existsSync(`${dataDir}.log`) ? fs.readFileSync(`${dataDir}.log`, "utf8") : "";
    const started = log.match(/ sandbox i[0-9a-z]+: pid \d+/g)?.length ?? 0;
    if (started >= WARM_POOL_AT_START) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Writes back the dirty pages the previous step left (`sync`), so that each
 * timed step starts from a clean page cache: a step timed right after
 * hundreds of MB were written waits on their writeback, which measured up to
 * 3x slower tar runs for whichever came second.
 */
function settleDisk() {
  execFileSync("sync");
}

/** The floor: skopeo copy to a fresh OCI directory, then tar -x of each layer. */
async function floor(host, work) {
  const dir = fs.mkdtempSync(path.join(work, "floor-"));
  const phases = {};
  const total = await timeIt(async () => {
    phases.copy = await timeIt(() =>
      run("skopeo", [
        "--insecure-policy",
        "copy",
        "--src-tls-verify=false",
        `docker://${host}/${BIG}`,
        `oci:${path.join(dir, "oci")}:img`,
      ]),
    );
    const { manifest, blob } = layoutManifest(path.join(dir, "oci"), "img");
    phases.tar = await timeIt(async () => {
      for (const [i, l] of manifest.layers.entries()) {
        const root = path.join(dir, `layer${i}`);
        fs.mkdirSync(root);
        await run("tar", [
          "-x",
          "-z",
          "-f",
          blob(l.digest),
          "-C",
          root,
          "--numeric-owner",
          "--same-owner",
          "--preserve-permissions",
        ]);
      }
    });
  });
  // Not in the floor: what the service's pull runs before its copy (to skip unpacked layers).
  const inspect = await timeIt(() =>
    run("skopeo", ["inspect", "--raw", "--tls-verify=false", `docker://${host}/${BIG}`]),
  );
  return { total, phases, inspect };
}

/**
 * Template.build of `image` against `service`, its build log printed live
 * with offsets; returns the wall time and the log entries.
 */
async function build(service, image, name) {
  const logs = [];
  let started;
  const total = await timeIt(async () => {
    started = Date.now();
    await Template.build(Template().fromImage(image), name, {
      apiKey: service.apiKey,
      apiUrl: service.apiUrl,
      sandboxUrl: service.sandboxUrl,
      cpuCount: 1,
      memoryMB: 512,
      onBuildLogs: (entry) => {
        logs.push(entry);
        say(`  +${((Date.now() - started) / 1000).toFixed(1)} s  ${entry.message}`);
      },
    });
  });
  return { total, logs, started };
}

/**
 * Splits the service's build into phases by its log's timestamps: until the
 * pull began ("Pulling …": the SDK's create and start calls, the build
 * queued), the pull ("Pulled …": skopeo inspect then skopeo copy), the
 * unpacking ("Layer n/n …"), and the rest (conventions layer, build sandbox
 * if there are steps, the SDK's last status poll).
 */
function phasesOf({ total, logs, started }) {
  const at = (re) => logs.find((e) => re.test(e.message))?.timestamp.getTime();
  const pulling = at(/^Pulling /);
  const pulled = at(/^Pulled /);
  const unpacked = [...logs].reverse().find((e) => /^Layer \d+\/\d+ /.test(e.message))?.timestamp;
  if (pulling === undefined || pulled === undefined || unpacked === undefined) return undefined;
  return {
    before: pulling - started,
    pull: pulled - pulling,
    unpack: unpacked.getTime() - pulled,
    rest: total - (unpacked.getTime() - started),
  };
}

/** Bytes on disk (du -B1, one file system) of each entry of `dir`, and their sum. */
function diskBytes(dir) {
  const out = execFileSync("du", [
    "-s",
    "-x",
    "-B1",
    ...fs.readdirSync(dir).map((d) => path.join(dir, d)),
  ])
    .toString()
    .trim()
    .split("\n")
    .map((l) => l.split("\t"))
    .map(([bytes, p]) => ({ name: path.basename(p), bytes: Number(bytes) }));
  return { entries: out, total: out.reduce((n, e) => n + e.bytes, 0) };
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const layerId = (digest) => `oci${digest.slice("sha256:".length, "sha256:".length + 56)}`;

async function main() {
  const work = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "sbx-bench-"));
  let registry;
  let service;
  try {
    console.log(
      `sandbox-iac image benchmark (${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB)`,
    );
    console.log(`load at start: ${uptime()}`);
    const layout = await makeImages(CACHE, say);
    registry = await reg.startRegistry(path.join(CACHE, "registry"));
    for (const [tag, name] of [
      ["big", BIG],
      ["other", OTHER],
    ]) {
      if (!(await reg.hasImage(registry.host, name))) {
        say(`pushing ${name} to the loopback registry (once)`);
        await reg.pushImage(`${layout}:${tag}`, registry.host, name);
      }
    }
    const { manifest } = layoutManifest(layout, "big");
    const { manifest: otherManifest } = layoutManifest(layout, "other");
    const compressed = manifest.layers.reduce((n, l) => n + l.size, 0);
    console.log(
      `image ${BIG}: ${manifest.layers.length} layers, ${mb(compressed)} compressed (${manifest.layers.map((l) => mb(l.size)).join(" + ")})`,
    );

    const floors = [];
    const ours = [];
    let last;
    // Alternating, so that load on the machine weighs on both alike.
    // Alternating which goes first, so that load on the machine weighs on both alike. Nothing is
    // deleted before the end: ext4 creates files several times slower right after as many
    // were deleted (2-6 s instead of 0.3 s for 10,000 files here), which would penalize
    // whichever came next.
    for (let i = 0; i < ROUNDS; i++) {
      const runFloor = async () => {
        say(`round ${i + 1}/${ROUNDS}: floor (skopeo copy + tar -x)`);
        settleDisk();
        const f = await floor(registry.host, work);
        floors.push(f);
        say(`  floor ${ms(f.total)} (copy ${ms(f.phases.copy)}, tar ${ms(f.phases.tar)})`);
      };
      const runOurs = async () => {
        const dataDir = path.join(work, `data${i}`);
        say(`round ${i + 1}/${ROUNDS}: starting sandbox-iac serve on a fresh data dir`);
        const startMs = await timeIt(async () => {
          service = await startServiceProcess(dataDir, {
            onWaiting: (line) => say(`  still starting; service log: ${line.slice(0, 160)}`),
          });
        });
        say(`  service ready in ${ms(startMs)} (not counted); waiting for its warm pool`);
        const settleMs = await timeIt(async () => {
          if (!(await settled(dataDir))) say("  warm pool not started in 180 s: building anyway");
        });
        say(`  warm pool started in ${ms(settleMs)} more; building from ${BIG}`);
        settleDisk();
        const b = await build(service, `${registry.host}/${BIG}`, `bench-image-${i}`);
        ours.push(b);
        say(`  ours ${ms(b.total)}`);
        if (i < ROUNDS - 1) {
          await service.close();
          service = undefined;
        } else {
          last = dataDir;
        }
      };
      if (i % 2 === 0) {
        await runFloor();
        await runOurs();
      } else {
        await runOurs();
        await runFloor();
      }
    }
    console.log(`load after the builds: ${uptime()}`);
    for (const [i, { b, f }] of ours.map((b, i) => ({ b, f: floors[i] })).entries()) {
      const p = phasesOf(b);
      row(
        `first build from image, round ${i + 1}`,
        ms(b.total),
        ms(f.total) + " (floor)",
        `${(b.total / f.total).toFixed(2)}x, target <= 1.5x` +
          (p
            ? `; ours: create+queue ${ms(p.before)}, pull ${ms(p.pull)}, unpack ${ms(p.unpack)}, conventions+finish ${ms(p.rest)}`
            : "") +
          `; floor: copy ${ms(f.phases.copy)}, tar ${ms(f.phases.tar)}; skopeo inspect alone ${ms(f.inspect)}`,
      );
    }
    for (const [label, pick] of [
      ["best", (xs) => Math.min(...xs)],
      ["median", (xs) => percentile(xs, 50)],
    ]) {
      const o = pick(ours.map((b) => b.total));
      const f = pick(floors.map((x) => x.total));
      row(
        `first build from image, ${label} of ${ROUNDS}`,
        ms(o),
        ms(f) + " (floor)",
        `${(o / f).toFixed(2)}x, target <= 1.5x`,
      );
    }

    say(`disk: building ${OTHER} (same base layer) on the same service`);
    await build(service, `${registry.host}/${OTHER}`, "bench-image-other");
    const store = path.join(last, "layers");
    const { entries, total } = diskBytes(store);
    const size = (digest) => entries.find((e) => e.name === layerId(digest))?.bytes ?? 0;
    const shared = manifest.layers[0].digest;
    const copies = entries.filter((e) => e.name === layerId(shared)).length;
    const imageLayers = entries.filter((e) => /^oci[0-9a-f]{56}$/.test(e.name));
    const conventions = entries.filter((e) => /^e2b[0-9a-f]{56}$/.test(e.name));
    const rest = total - [...imageLayers, ...conventions].reduce((n, e) => n + e.bytes, 0);
    row(
      "disk: layer store after both images",
      mb(total),
      `${mb(size(shared))} (shared layer)`,
      `${copies} copy of the shared layer; image layers ${mb(imageLayers.reduce((n, e) => n + e.bytes, 0))} ` +
        `(${BIG} top ${mb(size(manifest.layers[1].digest))}, ${OTHER} top ${mb(size(otherManifest.layers[1].digest))}), ` +
        `conventions ${mb(conventions.reduce((n, e) => n + e.bytes, 0))} (${conventions.length}), built-in base and the rest ${mb(rest)}; ` +
        `a second copy of the base would make it ${mb(total + size(shared))}`,
    );
    console.log(`load at the end: ${uptime()}`);
  } catch (err) {
    // The service's own log says where a failed or stalled build stopped.
    for (const log of fs.readdirSync(work).filter((f) => f.endsWith(".log"))) {
      const lines = fs.readFileSync(path.join(work, log), "utf8").trim().split("\n");
      console.error(`--- last lines of the service log ${log}:\n${lines.slice(-30).join("\n")}`);
    }
    throw err;
  } finally {
    await service?.close();
    await registry?.close();
    if (process.env.BENCH_KEEP_LOGS === "1") {
      const logs = path.join(CACHE, "logs");
      fs.mkdirSync(logs, { recursive: true });
      for (const f of fs.readdirSync(work).filter((n) => n.endsWith(".log"))) {
        fs.copyFileSync(path.join(work, f), path.join(logs, f));
      }
      console.log(`service logs kept in ${logs}`);
    }
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
