// The soak's sandbox traffic: creates, kills, pauses and resumes, commands,
// and file uploads and downloads with checksums, through the official SDK and
// the project's own clients (control client, sandbox client, Provisioner).
// Each op records in the ledger only what its call acknowledged; a call that
// fails marks what it may have done as uncertain (see ledger.js).
"use strict";
const { randomBytes } = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const { Sandbox } = require("e2b");
const { createSandboxClient } = require("../../dist/client/sandbox");
const { provisionerLifecycle } = require("../../dist/resources/provisioner");
const { sha256 } = require("./ledger");

/** Where the soak's files go in a sandbox (verification hashes this tree). */
const SOAK_DIR = "/home/user/soak";
/** Where a volume is mounted in the sandboxes that mount one. */
const VOLUME_MOUNT = "/mnt/soak-vol";
/** Sandboxes kept at once: enough to pause some and write to others, few enough for 2 cores. */
const MAX_SANDBOXES = 4;
const MIN_SANDBOXES = 2;
/** Files kept per sandbox before the oldest is removed (bounds the checks after each restart). */
const MAX_FILES = 40;

/** Random bytes: mostly small, sometimes a few MiB (a longer upload for a crash to cut). */
function payload(random) {
  const r = random();
  const size = r < 0.7 ? 1024 + Math.floor(random() * 64 * 1024) : r < 0.95 ? 1 << 20 : 4 << 20;
  return randomBytes(size);
}

/**
 * A running SDK handle of a leased sandbox: resumes it (SDK connect or the
 * control client's connect) when it is paused or its handle belongs to a
 * service that was killed since.
 */
async function running(ctx, box) {
  if (box.sbx && box.gen === ctx.svc.gen && box.state === "running") return box.sbx;
  const gen = ctx.svc.gen;
  if (ctx.ledger.random() < 0.3) {
    await ctx.control().connectSandbox(box.id, { timeout: ctx.sandboxTimeoutSeconds });
  }
  box.sbx = await Sandbox.connect(box.id, {
    ...ctx.sdkOpts(),
    timeoutMs: ctx.sandboxTimeoutSeconds * 1000,
  });
  box.gen = gen;
  box.state = "running";
  ctx.count("resume");
  return box.sbx;
}

/** Runs `fn(box)` on a leased sandbox matching `pred`; `false` (skipped) when none is free. */
async function withSandbox(ctx, fn, pred) {
  const box = ctx.ledger.lease(pred);
  if (!box) return false;
  try {
    await fn(box);
    return true;
  } finally {
    ctx.ledger.release(box);
  }
}

/** Creates a sandbox through the SDK or the control client, tagged in its metadata. */
async function create(ctx) {
  const { ledger } = ctx;
  // Creates in flight count too: the workers would otherwise overshoot together.
  if (ledger.sandboxes.size + ledger.creating >= MAX_SANDBOXES) return false;
  ledger.creating += 1;
  try {
    return await createOne(ctx);
  } finally {
    ledger.creating -= 1;
  }
}

async function createOne(ctx) {
  const { ledger } = ctx;
  const tag = ledger.next(`${ctx.runId}-sbx`);
  const volume = ledger.random() < 0.5 ? ledger.pick([...ledger.volumes.values()]) : undefined;
  const gen = ctx.svc.gen;
  try {
    if (ledger.random() < 0.7) {
      const sbx = await Sandbox.create({
        ...ctx.sdkOpts(),
        metadata: { soak: tag },
        timeoutMs: ctx.sandboxTimeoutSeconds * 1000,
        ...(volume ? { volumeMounts: { [VOLUME_MOUNT]: volume.name } } : {}),
      });
      ledger.addSandbox({ id: sbx.sandboxId, tag, token: sbx.envdAccessToken, sbx, gen, volume });
    } else {
      const made = await ctx.control().createSandboxV2({
        templateID: "base",
        metadata: { soak: tag },
        timeout: ctx.sandboxTimeoutSeconds,
        ...(volume ? { volumeMounts: [{ name: volume.name, path: VOLUME_MOUNT }] } : {}),
      });
      ledger.addSandbox({ id: made.sandboxID, tag, token: made.envdAccessToken, gen, volume });
    }
  } catch (err) {
    ledger.uncertainCreates.add(tag);
    throw err;
  }
}

/** Kills a sandbox (SDK or control client) when more than the minimum are kept. */
async function kill(ctx) {
  const { ledger } = ctx;
  if (ledger.sandboxes.size <= MIN_SANDBOXES) return false;
  const box = ledger.lease();
  if (!box) return false;
  // Whatever happens next, the sandbox is no longer one whose files are checked.
  ledger.sandboxes.delete(box.id);
  try {
    if (ledger.random() < 0.5) {
      if (!(await Sandbox.kill(box.id, ctx.sdkOpts())))
        throw new Error(`kill ${box.id}: not found`);
    } else {
      await ctx.control().killSandbox(box.id);
    }
    ledger.killed.add(box.id);
  } catch (err) {
    ledger.uncertainKills.add(box.id);
    throw err;
  }
}

/** Pauses a running sandbox (SDK or control client); the next op on it resumes it. */
function pause(ctx) {
  return withSandbox(
    ctx,
    async (box) => {
      box.state = "unknown";
      if (ctx.ledger.random() < 0.5) await Sandbox.pause(box.id, ctx.sdkOpts());
      else await ctx.control().pauseSandbox(box.id, { memory: ctx.ledger.random() < 0.5 });
      box.state = "paused";
    },
    (b) => b.state === "running",
  );
}

/** A command whose output is known. */
function command(ctx) {
  return withSandbox(ctx, async (box) => {
    const sbx = await running(ctx, box);
    const n = Math.floor(ctx.ledger.random() * 1000);
    const r = await sbx.commands.run(`echo $((${n} * 3)) && ls ${SOAK_DIR} > /dev/null 2>&1; true`);
    if (r.stdout.trim() !== String(n * 3)) throw new Error(`command printed ${r.stdout.trim()}`);
  });
}

/** Removes the oldest file of a sandbox that holds too many (files.remove). */
async function trim(ctx, box, sbx) {
  if (box.files.size < MAX_FILES) return;
  const oldest = box.files.keys().next().value;
  box.files.delete(oldest);
  await sbx.files.remove(oldest);
  ctx.count("remove");
}

/** Uploads random bytes to a new path (SDK files.write or the sandbox client); acknowledged with its checksum. */
function write(ctx) {
  return withSandbox(ctx, async (box) => {
    const sbx = await running(ctx, box);
    await trim(ctx, box, sbx);
    const data = payload(ctx.ledger.random);
    const file = `${SOAK_DIR}/${ctx.ledger.next("w")}.bin`;
    const sum = sha256(data);
    try {
      if (ctx.ledger.random() < 0.6) {
        await sbx.files.write(file, new Blob([data]));
      } else {
        const client = createSandboxClient({
          sandboxID: box.id,
          accessToken: box.token,
          baseUrl: ctx.svc.endpoint.sandboxUrl,
          timeoutMs: 60_000,
        });
        await client.uploadBytes(file, data);
      }
    } catch (err) {
      ctx.ledger.maybeFiles.push({ kind: "sandbox", id: box.id, path: file, sha: sum });
      throw err;
    }
    box.files.set(file, sum);
  });
}

/** Downloads an acknowledged file (SDK or sandbox client) and compares its checksum. */
function read(ctx) {
  return withSandbox(
    ctx,
    async (box) => {
      const sbx = await running(ctx, box);
      const [file, sum] = ctx.ledger.pick([...box.files.entries()]);
      let bytes;
      if (ctx.ledger.random() < 0.6) {
        bytes = await sbx.files.read(file, { format: "bytes" });
      } else {
        const client = createSandboxClient({
          sandboxID: box.id,
          accessToken: box.token,
          baseUrl: ctx.svc.endpoint.sandboxUrl,
          timeoutMs: 60_000,
        });
        bytes = await client.readBytes(file);
      }
      if (sha256(bytes) !== sum) {
        ctx.ledger.problem("lostWrites", `${box.id}:${file} read back with another checksum`);
      }
    },
    (b) => b.files.size > 0,
  );
}

/** The Provisioner uploads a small local tree and runs a command in a known sandbox. */
function provision(ctx) {
  return withSandbox(ctx, async (box) => {
    await trim(ctx, box, await running(ctx, box));
    const name = ctx.ledger.next("prov");
    const local = path.join(ctx.work, name);
    fs.mkdirSync(path.join(local, "sub"), { recursive: true });
    const files = new Map();
    for (const rel of ["a.bin", "sub/b.bin", "sub/c.bin"]) {
      const data = randomBytes(1024 + Math.floor(ctx.ledger.random() * 32 * 1024));
      fs.writeFileSync(path.join(local, rel), data);
      files.set(`${SOAK_DIR}/${name}/${rel}`, sha256(data));
    }
    try {
      await provisionerLifecycle.create(
        {
          sandboxID: box.id,
          files: [{ source: local, destination: `${SOAK_DIR}/${name}` }],
          commands: [{ run: `test -s ${SOAK_DIR}/${name}/sub/c.bin` }],
        },
        ctx.resourceContext(),
      );
    } catch (err) {
      for (const [p, sha] of files)
        ctx.ledger.maybeFiles.push({ kind: "sandbox", id: box.id, path: p, sha });
      throw err;
    } finally {
      fs.rmSync(local, { recursive: true, force: true });
    }
    for (const [p, sha] of files) box.files.set(p, sha);
  });
}

module.exports = {
  SOAK_DIR,
  VOLUME_MOUNT,
  running,
  withSandbox,
  sandboxOps: { create, kill, pause, command, write, read, provision },
};
