// npm run soak: a bounded soak of the local service (docs/benchmarks.md#soak).
// For --minutes (SOAK_MINUTES, default 20), --concurrency workers
// (SOAK_CONCURRENCY, default 3) send mixed traffic through the official SDK and
// the project's clients and resources, while the service (`sandbox-iac serve`,
// a child process on a fixed data dir) is killed with SIGKILL at random moments
// (every --cycle-seconds on average, SOAK_CYCLE_SECONDS, default 75) and
// started again. After each restart, with the traffic stopped, every
// acknowledged write is checked with its checksum, the sandbox listing against
// what the soak knows, and the leak counters are read. Exits 1 on a lost or
// torn write or a lost, duplicated or unknown sandbox.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { parseArgs } = require("node:util");
const { startServiceProcess } = require("./service");
const { createControlClient } = require("../dist/client/control");
const { resolveConfig } = require("../dist/config");
const { Ledger, seededRandom } = require("./soak/ledger");
const { readCounters, settledCounters, spareDirs } = require("./soak/leaks");
const { sandboxOps } = require("./soak/ops-sandbox");
const { createVolumes, storeOps } = require("./soak/ops-store");
const { verifyAfterRestart } = require("./soak/verify");
const {
  printCycle,
  printCycleHeader,
  printLeaks,
  printOps,
  printProblems,
} = require("./soak/report");

const { values: argv } = parseArgs({
  options: {
    minutes: { type: "string" },
    concurrency: { type: "string" },
    "cycle-seconds": { type: "string" },
    seed: { type: "string" },
  },
});
function numberOption(name, env, fallback) {
  const raw = argv[name] ?? process.env[env];
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`--${name} (${env}) must be a positive number, got ${raw}`);
    process.exit(2);
  }
  return n;
}
const MINUTES = numberOption("minutes", "SOAK_MINUTES", 20);
const CONCURRENCY = Math.round(numberOption("concurrency", "SOAK_CONCURRENCY", 3));
const CYCLE_SECONDS = numberOption("cycle-seconds", "SOAK_CYCLE_SECONDS", 75);
const SEED = Math.round(numberOption("seed", "SOAK_SEED", 1 + Math.floor(Math.random() * 1e9)));
/** How long one op may run before its worker moves on (it is then treated as cut off). */
const OP_TIMEOUT_MS = 180_000;
/** How long the drain after a kill waits for the ops in flight to end. */
const DRAIN_TIMEOUT_MS = 120_000;
/** Relative weights of the op kinds. */
const WEIGHTS = {
  create: 2,
  kill: 1,
  pause: 2,
  command: 3,
  write: 5,
  read: 3,
  provision: 1,
  volumeWrite: 3,
  volumeRead: 2,
  volumeFromSandbox: 1,
  snapshot: 1,
  build: 0.5,
};
const OPS = { ...sandboxOps, ...storeOps };

/** `promise`, or undefined after `ms` if it has not settled by then. */
function within(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

async function main() {
  const random = seededRandom(SEED);
  const ledger = new Ledger(random);
  const work = fs.mkdtempSync(path.join(process.env.SOAK_DIR ?? os.tmpdir(), "sbx-soak-"));
  const dataDir = path.join(work, "data");
  process.env.SANDBOX_IAC_CACHE_DIR = path.join(work, "cache");
  const servicePids = new Set();
  const svc = { gen: 1, down: true, service: undefined, endpoint: undefined };
  const stats = new Map(Object.keys({ ...WEIGHTS, resume: 0 }).map((k) => [k, newStat()]));
  const t0 = Date.now();
  const deadline = t0 + MINUTES * 60_000;
  let interrupted = false;
  let wake = () => undefined;
  const onSignal = () => {
    interrupted = true;
    wake();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  async function start() {
    svc.service = await startServiceProcess(dataDir);
    servicePids.add(svc.service.pid);
    const { apiKey, apiUrl, sandboxUrl } = svc.service;
    svc.endpoint = { apiKey, apiUrl, sandboxUrl };
    const config = resolveConfig({ ...svc.endpoint, log: () => undefined });
    svc.control = createControlClient({ config, log: () => undefined, timeoutMs: 60_000 });
    svc.config = config;
    svc.down = false;
  }
  const known = () => ({
    sandboxIDs: new Set(ledger.sandboxes.keys()),
    templates: ledger.templates.size,
    snapshots: ledger.snapshots.size,
  });
  const where = () => ({ dataDir, servicePids, pid: svc.down ? 0 : svc.service.pid });

  /** The context of one op: its calls refuse to reach a service started after the op began. */
  function opContext(gen) {
    const live = () => {
      if (svc.down || svc.gen !== gen) throw new Error("cut off: the service was killed");
    };
    return {
      ledger,
      svc,
      work,
      runId: `soak${SEED.toString(36)}`,
      sandboxTimeoutSeconds: Math.round(MINUTES * 60 + 3600),
      count: (kind) => stat(kind).ok++,
      sdkOpts: () => (live(), { ...svc.endpoint, requestTimeoutMs: 60_000 }),
      control: () => (live(), svc.control),
      resourceContext: () => (live(), { config: svc.config, baseDir: work, log: () => undefined }),
    };
  }
  function stat(kind) {
    if (!stats.has(kind)) stats.set(kind, newStat());
    return stats.get(kind);
  }

  // The traffic: workers pick an op kind by weight while the gate is open.
  const gate = { open: false, stopping: false, waiters: [] };
  const setGate = (open) => {
    gate.open = open;
    if (open || gate.stopping) for (const w of gate.waiters.splice(0)) w();
  };
  const inflight = new Set();
  let opsThisCycle = 0;
  let cutThisCycle = 0;
  function chooseKind() {
    if (ledger.sandboxes.size < 2) return "create";
    const total = Object.values(WEIGHTS).reduce((a, b) => a + b, 0);
    let r = random() * total;
    for (const [kind, w] of Object.entries(WEIGHTS)) if ((r -= w) < 0) return kind;
    return "command";
  }
  async function worker() {
    while (!gate.stopping) {
      if (!gate.open) {
        await new Promise((r) => gate.waiters.push(r));
        continue;
      }
      const kind = chooseKind();
      const gen = svc.gen;
      const op = OPS[kind](opContext(gen)).then(
        (done) => {
          opsThisCycle += 1;
          if (done === false) stat(kind).skipped++;
          else stat(kind).ok++;
        },
        (err) => {
          opsThisCycle += 1;
          if (svc.gen !== gen || svc.down) {
            cutThisCycle += 1;
            stat(kind).cut++;
          } else {
            stat(kind).failed++;
            const errors = stat(kind).errors;
            if (errors.length < 3) errors.push(String(err?.message ?? err).slice(0, 300));
          }
        },
      );
      inflight.add(op);
      op.finally(() => inflight.delete(op));
      await within(op, OP_TIMEOUT_MS);
    }
  }

  const rows = [];
  let start0;
  let end;
  let failed = false;
  try {
    console.log(
      `sandbox-iac soak: ${MINUTES} min, concurrency ${CONCURRENCY}, a kill -9 every ~${CYCLE_SECONDS} s, seed ${SEED} (${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB), data dir ${dataDir}`,
    );
    await start();
    start0 = { ...(await settledCounters(where())), ...(await spareDirs(dataDir, known())) };
    await createVolumes(opContext(svc.gen), 2);
    const workers = Array.from({ length: CONCURRENCY }, () => worker());
    printCycleHeader();
    for (let cycle = 1; !interrupted; cycle++) {
      opsThisCycle = 0;
      cutThisCycle = 0;
      setGate(true);
      const wait = CYCLE_SECONDS * 1000 * (0.4 + 1.2 * random());
      const last = Date.now() + wait >= deadline;
      await new Promise((r) => {
        wake = r;
        setTimeout(r, Math.max(0, Math.min(wait, deadline - Date.now())));
      });
      if (interrupted) break;
      // The kill lands while the ops are in flight; the drain lets them fail.
      const atKill = readCounters(where());
      setGate(false);
      svc.down = true;
      svc.gen += 1;
      await svc.service.kill9();
      await within(Promise.allSettled([...inflight]), DRAIN_TIMEOUT_MS);
      const r0 = Date.now();
      await start();
      const after = await settledCounters(where());
      const restartMs = Date.now() - r0;
      const v0 = Date.now();
      const verified = await verifyAfterRestart(opContext(svc.gen));
      Object.assign(after, await spareDirs(dataDir, known()));
      const row = {
        cycle,
        atMin: (Date.now() - t0) / 60_000,
        ops: opsThisCycle,
        cut: cutThisCycle,
        after,
        atKill,
        verified,
        verifyMs: Date.now() - v0,
        restartMs,
      };
      rows.push(row);
      printCycle(row);
      if (last || Date.now() >= deadline) break;
    }
    end = rows.length ? rows[rows.length - 1].after : readCounters(where());
    gate.stopping = true;
    setGate(false);
    await within(Promise.allSettled([...inflight, ...workers]), DRAIN_TIMEOUT_MS);
  } catch (err) {
    failed = true;
    console.error(`\nthe soak stopped: ${err?.stack ?? err}`);
  } finally {
    gate.stopping = true;
    setGate(false);
    await shutDown(svc, dataDir, servicePids);
  }
  const afterShutdown = readCounters({ dataDir, servicePids, pid: 0 });
  fs.rmSync(work, { recursive: true, force: true });

  printOps(stats);
  const checkMin = rows.reduce((a, r) => a + r.verifyMs, 0) / 60_000;
  const restartMin = rows.reduce((a, r) => a + r.restartMs, 0) / 60_000;
  console.log(
    `\nrestarts survived: ${rows.length} (each a kill -9 at a random moment, a restart, and every check)` +
      `\nwall time ${((Date.now() - t0) / 60_000).toFixed(1)} min: restarts and settling ${restartMin.toFixed(1)} min, checks ${checkMin.toFixed(1)} min, the rest traffic`,
  );
  const sum = (k) => rows.reduce((a, r) => a + r.verified[k], 0);
  console.log(
    `calls a kill cut off that had taken effect: creates ${sum("cutCreatesThatHappened")}, writes ${sum("cutWritesThatLanded")} (complete ones then count as acknowledged); kills that had not: ${sum("cutKillsThatDidNot")}` +
      `\nchecked over all restarts: ${sum("files")} sandbox files, ${sum("volumeFiles")} volume files, ${sum("snapshotFiles")} files in ${sum("snapshots")} snapshot starts, ${sum("templateFiles")} files in ${sum("templates")} template starts; upload temp files seen: ${sum("tempFiles")}`,
  );
  if (start0) printLeaks({ start: start0, rows, end: end ?? start0, afterShutdown });
  const lost = printProblems(ledger.problems);
  process.exit(lost || failed || interrupted ? 1 : 0);
}

function newStat() {
  return { ok: 0, cut: 0, failed: 0, skipped: 0, errors: [] };
}

/**
 * The normal shutdown of the last service start (SIGTERM: its sandboxes stop
 * and their mounts go), starting one first when the last one is dead, so that
 * nothing of the runtime outlives the data dir.
 */
async function shutDown(svc, dataDir, servicePids) {
  try {
    if (svc.down) {
      svc.service = await startServiceProcess(dataDir);
      servicePids.add(svc.service.pid);
    }
    await svc.service?.close();
  } catch (err) {
    console.error(`the last shutdown failed: ${err?.message ?? err}`);
  }
  svc.down = true;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
