// The soak's traffic on what outlives a sandbox: volume writes and reads (the
// SDK's Volume, the control client, and a sandbox writing through its mount),
// snapshots (SDK and the Snapshot resource) and template builds (SDK
// Template.build and the Template resource). Each op records in the ledger only
// what its call acknowledged.
"use strict";
const { randomBytes } = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const { Sandbox, Template, Volume } = require("e2b");
const { snapshotLifecycle } = require("../../dist/resources/snapshot");
const { templateLifecycle } = require("../../dist/resources/template");
const { sha256 } = require("./ledger");
const { VOLUME_MOUNT, running, withSandbox } = require("./ops-sandbox");

/** Files kept per volume before the oldest is removed. */
const MAX_VOLUME_FILES = 40;
/** Snapshots and templates kept: each is started and checked after every restart. */
const MAX_SNAPSHOTS = 2;
const MAX_TEMPLATES = 2;

function volumeRef(vol) {
  return { volumeID: vol.id, token: vol.token };
}

/** Removes the oldest file of a volume holding too many (SDK or control client). */
async function trimVolume(ctx, vol) {
  if (vol.files.size < MAX_VOLUME_FILES) return;
  const oldest = vol.files.keys().next().value;
  vol.files.delete(oldest);
  if (ctx.ledger.random() < 0.5)
    await vol.sdk().remove(oldest, { apiUrl: ctx.svc.endpoint.apiUrl });
  else await ctx.control().removeVolumePath(volumeRef(vol), oldest);
  ctx.count("volumeRemove");
}

/** Writes random bytes to a new path of a volume through the content API. */
async function volumeWrite(ctx) {
  const vol = ctx.ledger.pick([...ctx.ledger.volumes.values()]);
  await trimVolume(ctx, vol);
  const data = randomBytes(512 + Math.floor(ctx.ledger.random() * 256 * 1024));
  const file = `/${ctx.ledger.next("v")}.bin`;
  const sum = sha256(data);
  try {
    if (ctx.ledger.random() < 0.5) {
      await vol.sdk().writeFile(file, new Blob([data]), { apiUrl: ctx.svc.endpoint.apiUrl });
    } else {
      await ctx.control().writeVolumeFile(volumeRef(vol), file, data);
    }
  } catch (err) {
    ctx.ledger.maybeFiles.push({ kind: "volume", id: vol.id, path: file, sha: sum });
    throw err;
  }
  vol.files.set(file, sum);
}

/** Reads an acknowledged volume file back and compares its checksum. */
async function volumeRead(ctx) {
  const vols = [...ctx.ledger.volumes.values()].filter((v) => v.files.size > 0);
  if (vols.length === 0) return false;
  const vol = ctx.ledger.pick(vols);
  const [file, sum] = ctx.ledger.pick([...vol.files.entries()]);
  const bytes = await readVolumeFile(ctx, vol, file);
  if (bytes !== undefined && sha256(bytes) !== sum) {
    ctx.ledger.problem("lostWrites", `volume ${vol.name}:${file} read back with another checksum`);
  }
  return true;
}

/** A volume file's bytes (SDK or control client); `undefined` when it was trimmed meanwhile. */
async function readVolumeFile(ctx, vol, file) {
  if (ctx.ledger.random() < 0.5) {
    const bytes = await vol
      .sdk()
      .readFile(file, { apiUrl: ctx.svc.endpoint.apiUrl, format: "bytes" });
    return vol.files.has(file) ? Buffer.from(bytes) : undefined;
  }
  const stream = await ctx.control().readVolumeFile(volumeRef(vol), file);
  const bytes = Buffer.from(await new Response(stream).arrayBuffer());
  return vol.files.has(file) ? bytes : undefined;
}

/** A sandbox that mounts a volume writes a file into it; the checksum it prints is the acknowledgement. */
function volumeFromSandbox(ctx) {
  return withSandbox(
    ctx,
    async (box) => {
      const sbx = await running(ctx, box);
      const vol = ctx.ledger.volumes.get(box.volume.id);
      const name = `/${ctx.ledger.next("m")}.bin`;
      const kib = 1 + Math.floor(ctx.ledger.random() * 512);
      const r = await sbx.commands.run(
        `head -c ${kib}K /dev/urandom > ${VOLUME_MOUNT}${name} && sha256sum ${VOLUME_MOUNT}${name}`,
      );
      const sum = r.stdout.split(" ")[0];
      if (!/^[0-9a-f]{64}$/.test(sum)) throw new Error(`sha256sum printed ${r.stdout}`);
      vol.files.set(name, sum);
    },
    (b) => b.volume !== undefined,
  );
}

/** Snapshots a sandbox holding files (SDK or the Snapshot resource); the snapshot must hold them. */
function snapshot(ctx) {
  return ctx.ledger.alone("snapshot", () => snapshotOne(ctx));
}

function snapshotOne(ctx) {
  return withSandbox(
    ctx,
    async (box) => {
      await trimSnapshots(ctx);
      const sbx = await running(ctx, box);
      const name = ctx.ledger.next(`${ctx.runId}-snap`);
      const files = new Map(box.files);
      let id;
      try {
        if (ctx.ledger.random() < 0.5) {
          id = (await sbx.createSnapshot({ name })).snapshotId;
        } else {
          id = (await snapshotLifecycle.create({ sandboxID: box.id, name }, ctx.resourceContext()))
            .id;
        }
      } catch (err) {
        box.state = "unknown";
        ctx.ledger.uncertainSnapshots.add(name);
        throw err;
      }
      ctx.ledger.snapshots.set(id, { id, name, files });
    },
    (b) => b.files.size > 0,
  );
}

async function trimSnapshots(ctx) {
  const { ledger } = ctx;
  if (ledger.snapshots.size < MAX_SNAPSHOTS) return;
  const oldest = ledger.snapshots.values().next().value;
  ledger.snapshots.delete(oldest.id);
  try {
    if (ledger.random() < 0.5) await Sandbox.deleteSnapshot(oldest.id, ctx.sdkOpts());
    else await snapshotLifecycle.delete(oldest.id, undefined, ctx.resourceContext());
  } catch (err) {
    ledger.uncertainSnapshots.add(oldest.name);
    throw err;
  }
  ctx.count("snapshotDelete");
}

/** Builds a template on base with a COPY and a RUN (SDK Template.build or the Template resource). */
function build(ctx) {
  return ctx.ledger.alone("build", () => buildOne(ctx));
}

async function buildOne(ctx) {
  const { ledger } = ctx;
  await trimTemplates(ctx);
  const name = ledger.next(`${ctx.runId}-tpl`);
  const context = path.join(ctx.work, name);
  fs.mkdirSync(context, { recursive: true });
  const data = randomBytes(1024 + Math.floor(ledger.random() * 64 * 1024));
  fs.writeFileSync(path.join(context, "f.bin"), data);
  const token = randomBytes(8).toString("hex");
  const run = `mkdir -p /opt/soak && echo ${token} > /opt/soak/run.txt`;
  const files = new Map([
    ["/opt/soak/f.bin", sha256(data)],
    ["/opt/soak/run.txt", sha256(`${token}\n`)],
  ]);
  let templateID;
  try {
    if (ledger.random() < 0.5) {
      const tpl = Template({ fileContextPath: context })
        .fromTemplate("base")
        .copy("f.bin", "/opt/soak/f.bin", { user: "root" })
        .runCmd(run, { user: "root" });
      templateID = (
        await Template.build(tpl, name, { ...ctx.sdkOpts(), cpuCount: 1, memoryMB: 512 })
      ).templateId;
    } else {
      const made = await templateLifecycle.create(
        {
          name,
          cpuCount: 1,
          memoryMB: 512,
          build: {
            fromTemplate: "base",
            steps: [
              { copy: { src: "f.bin", dest: "/opt/soak/f.bin", user: "root" } },
              { run, user: "root" },
            ],
          },
        },
        { ...ctx.resourceContext(), baseDir: context },
      );
      templateID = made.id;
    }
  } catch (err) {
    ledger.uncertainTemplates.add(name);
    throw err;
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
  ledger.templates.set(name, { name, templateID, files });
}

async function trimTemplates(ctx) {
  const { ledger } = ctx;
  if (ledger.templates.size < MAX_TEMPLATES) return;
  const oldest = ledger.templates.values().next().value;
  ledger.templates.delete(oldest.name);
  try {
    await ctx.control().deleteTemplate(oldest.templateID);
  } catch (err) {
    ledger.uncertainTemplates.add(oldest.name);
    throw err;
  }
  ctx.count("templateDelete");
}

/** Creates the run's volumes (SDK and control client); called once before the traffic. */
async function createVolumes(ctx, count) {
  for (let i = 0; i < count; i++) {
    const name = `${ctx.runId}-vol-${i}`;
    const made =
      i % 2 === 0
        ? await Volume.create(name, ctx.sdkOpts())
        : await ctx.control().createVolume(name);
    const id = made.volumeId ?? made.volumeID;
    const vol = { id, name, token: made.token, files: new Map() };
    vol.sdk = () => new Volume(id, name, made.token);
    ctx.ledger.volumes.set(id, vol);
  }
}

module.exports = {
  createVolumes,
  readVolumeFile,
  storeOps: { volumeWrite, volumeRead, volumeFromSandbox, snapshot, build },
};
