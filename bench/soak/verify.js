// The checks after each restart, with no traffic running: the listing holds
// every acknowledged sandbox once and nothing else, every acknowledged file
// (sandboxes, volumes, snapshots, templates) is there with its checksum, and
// writes a crash cut off are either absent or complete. Problems go to the
// ledger; the return value counts what was checked.
"use strict";
const { Sandbox, Volume } = require("e2b");
const { sha256 } = require("./ledger");
const { SOAK_DIR } = require("./ops-sandbox");
const { readVolumeFile } = require("./ops-store");

/** Pages read at most from a paginated listing. */
const MAX_PAGES = 50;
/** Name part of the agent's and the volume store's temporary upload files. */
const TEMP_FILE = /(^|\/)\.sandbox-iac-|\.upload$/;

/** `path -> sha256` of every file under `dir` in a running sandbox. */
async function hashesIn(sbx, dir) {
  const r = await sbx.commands.run(
    `find ${dir} -type f -print0 2>/dev/null | xargs -0 -r sha256sum; true`,
    { timeoutMs: 120_000 },
  );
  const out = new Map();
  for (const line of r.stdout.split("\n")) {
    const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (m) out.set(m[2], m[1]);
  }
  return out;
}

/** Compares `files` (acknowledged) with `found`; returns how many were checked. */
function compare(ledger, where, files, found) {
  for (const [p, sum] of files) {
    const got = found.get(p);
    if (got === undefined) ledger.problem("lostWrites", `${where}:${p} is missing`);
    else if (got !== sum) ledger.problem("lostWrites", `${where}:${p} has another checksum`);
  }
  return files.size;
}

/** Every sandbox the service lists, through the SDK and through the control client. */
async function listings(ctx) {
  const pager = Sandbox.list({
    ...ctx.sdkOpts(),
    query: { state: ["running", "paused"] },
    limit: 50,
  });
  const sdk = [];
  for (let i = 0; i < MAX_PAGES && pager.hasNext; i++) sdk.push(...(await pager.nextItems()));
  const control = [];
  for await (const s of ctx
    .control()
    .listSandboxesV2({ state: ["running", "paused"], limit: 50 })) {
    control.push(s);
    if (control.length > MAX_PAGES * 50) break;
  }
  return { sdk, control };
}

/** The listing against the ledger: nothing lost, nothing twice, nothing unknown. */
async function checkListing(ctx, summary) {
  const { ledger } = ctx;
  const { sdk, control } = await listings(ctx);
  const seen = new Map();
  for (const s of sdk) {
    if (seen.has(s.sandboxId)) ledger.problem("duplicatedSandboxes", `${s.sandboxId} listed twice`);
    seen.set(s.sandboxId, s);
  }
  const controlIds = new Set(control.map((s) => s.sandboxID));
  for (const id of new Set([...seen.keys(), ...controlIds])) {
    if (!seen.has(id) || !controlIds.has(id))
      ledger.problem(
        "duplicatedSandboxes",
        `${id} is in only one of the SDK's and the control client's listings`,
      );
  }
  for (const [id, s] of seen) {
    if (ledger.sandboxes.has(id)) {
      if (s.state !== "paused") ledger.problem("notPausedAfterRestart", `${id} is ${s.state}`);
      continue;
    }
    const cutCreate = ledger.uncertainCreates.has(s.metadata?.soak);
    if (cutCreate || ledger.uncertainKills.has(id)) {
      // A create or kill the crash cut off: either outcome is right; the leftover goes.
      summary[cutCreate ? "cutCreatesThatHappened" : "cutKillsThatDidNot"] += 1;
      await Sandbox.kill(id, ctx.sdkOpts());
      ledger.killed.add(id);
      continue;
    }
    const what = ledger.killed.has(id)
      ? "killed (acknowledged) and listed again"
      : "unknown to the soak";
    ledger.problem("duplicatedSandboxes", `${id} ${what} (metadata ${JSON.stringify(s.metadata)})`);
  }
  for (const [id, box] of ledger.sandboxes) {
    if (seen.has(id)) continue;
    ledger.problem("lostSandboxes", `${id} (created and never killed) is not listed`);
    if (box.files.size > 0)
      ledger.problem(
        "lostWrites",
        `${box.files.size} acknowledged files went with lost sandbox ${id}`,
      );
    ledger.sandboxes.delete(id);
  }
  ledger.uncertainCreates.clear();
  ledger.uncertainKills.clear();
  summary.sandboxes = ledger.sandboxes.size;
}

/** Settles the writes cut off at `where`: present ones must be complete and become acknowledged. */
function settleMaybes(ledger, kind, id, found, files, summary) {
  const rest = [];
  for (const m of ledger.maybeFiles) {
    if (m.kind !== kind || m.id !== id) {
      rest.push(m);
      continue;
    }
    const got = found(m.path);
    if (got === undefined) continue;
    summary.cutWritesThatLanded += 1;
    if (got === m.sha) files.set(m.path, m.sha);
    else ledger.problem("tornWrites", `${kind} ${id}:${m.path} holds part of a cut-off upload`);
  }
  ledger.maybeFiles = rest;
}

async function checkSandboxFiles(ctx, summary) {
  const { ledger } = ctx;
  for (const box of ledger.sandboxes.values()) {
    let found;
    try {
      box.sbx = await Sandbox.connect(box.id, {
        ...ctx.sdkOpts(),
        timeoutMs: ctx.sandboxTimeoutSeconds * 1000,
      });
      box.gen = ctx.svc.gen;
      box.state = "running";
      summary.resumed += 1;
      found = await hashesIn(box.sbx, SOAK_DIR);
    } catch (err) {
      ledger.problem(
        "lostSandboxes",
        `${box.id} could not be resumed and checked: ${err?.message ?? err}`,
      );
      continue;
    }
    summary.files += compare(ledger, box.id, box.files, found);
    settleMaybes(ledger, "sandbox", box.id, (p) => found.get(p), box.files, summary);
    summary.tempFiles += [...found.keys()].filter((p) => TEMP_FILE.test(p)).length;
  }
}

async function checkVolumes(ctx, summary) {
  const { ledger } = ctx;
  const listed = new Set((await Volume.list(ctx.sdkOpts())).map((v) => v.volumeId));
  for (const vol of ledger.volumes.values()) {
    if (!listed.has(vol.id)) ledger.problem("lostWrites", `volume ${vol.name} is not listed`);
    const found = new Map();
    for (const e of await ctx
      .control()
      .listVolumeDir({ volumeID: vol.id, token: vol.token }, "/")) {
      if (e.type === "file") found.set(e.path, e);
      if (TEMP_FILE.test(e.path)) summary.tempFiles += 1;
    }
    const sums = new Map();
    const wanted = [
      ...vol.files.keys(),
      ...ledger.maybeFiles.filter((m) => m.id === vol.id).map((m) => m.path),
    ];
    for (const p of wanted) {
      if (!found.has(p)) continue;
      const bytes = await readVolumeFile(ctx, vol, p).catch(() => undefined);
      if (bytes !== undefined) sums.set(p, sha256(bytes));
    }
    summary.volumeFiles += compare(ledger, `volume ${vol.name}`, vol.files, sums);
    settleMaybes(ledger, "volume", vol.id, (p) => sums.get(p), vol.files, summary);
  }
}

/** Starts a sandbox from `template`, hashes its files and kills it. */
async function hashesFrom(ctx, template, dir) {
  const sbx = await Sandbox.create(template, { ...ctx.sdkOpts(), timeoutMs: 300_000 });
  try {
    return await hashesIn(sbx, dir);
  } finally {
    await sbx.kill();
  }
}

async function checkSnapshots(ctx, summary) {
  const { ledger } = ctx;
  const pager = Sandbox.listSnapshots({ ...ctx.sdkOpts(), limit: 50 });
  const listed = [];
  for (let i = 0; i < MAX_PAGES && pager.hasNext; i++) listed.push(...(await pager.nextItems()));
  const ids = new Set(listed.map((s) => s.snapshotId));
  for (const snap of ledger.snapshots.values()) {
    if (!ids.has(snap.id)) {
      ledger.problem("lostWrites", `snapshot ${snap.id} (acknowledged) is not listed`);
      ledger.snapshots.delete(snap.id);
      continue;
    }
    summary.snapshots += 1;
    const found = await hashesFrom(ctx, snap.id, SOAK_DIR).catch((err) => {
      ledger.problem(
        "lostWrites",
        `snapshot ${snap.id} could not be started: ${err?.message ?? err}`,
      );
    });
    if (found) summary.snapshotFiles += compare(ledger, `snapshot ${snap.id}`, snap.files, found);
  }
  for (const s of listed) {
    if (ledger.snapshots.has(s.snapshotId)) continue;
    const name = s.snapshotId.split(":")[0];
    if (ledger.uncertainSnapshots.has(name))
      await Sandbox.deleteSnapshot(s.snapshotId, ctx.sdkOpts());
    else ledger.problem("duplicatedSandboxes", `snapshot ${s.snapshotId} is unknown to the soak`);
  }
  ledger.uncertainSnapshots.clear();
}

async function checkTemplates(ctx, summary) {
  const { ledger } = ctx;
  for (const tpl of ledger.templates.values()) {
    summary.templates += 1;
    const found = await hashesFrom(ctx, tpl.name, "/opt/soak").catch((err) => {
      ledger.problem(
        "lostWrites",
        `template ${tpl.name} could not be started: ${err?.message ?? err}`,
      );
    });
    if (found) summary.templateFiles += compare(ledger, `template ${tpl.name}`, tpl.files, found);
  }
  for (const name of ledger.uncertainTemplates) {
    const found = await ctx
      .control()
      .getTemplateByAlias(name)
      .catch(() => undefined);
    if (found?.templateID) await ctx.control().deleteTemplate(found.templateID);
  }
  ledger.uncertainTemplates.clear();
}

/** Runs every check; returns the counts of what was checked. */
async function verifyAfterRestart(ctx) {
  const summary = {
    sandboxes: 0,
    resumed: 0,
    files: 0,
    volumeFiles: 0,
    snapshots: 0,
    snapshotFiles: 0,
    templates: 0,
    templateFiles: 0,
    cutCreatesThatHappened: 0,
    cutKillsThatDidNot: 0,
    cutWritesThatLanded: 0,
    tempFiles: 0,
  };
  await checkListing(ctx, summary);
  // Two lanes: resuming sandboxes and starting ones from snapshots and templates overlap their waits.
  await Promise.all([
    (async () => {
      await checkSandboxFiles(ctx, summary);
      await checkVolumes(ctx, summary);
    })(),
    (async () => {
      await checkSnapshots(ctx, summary);
      await checkTemplates(ctx, summary);
    })(),
  ]);
  return summary;
}

module.exports = { verifyAfterRestart };
