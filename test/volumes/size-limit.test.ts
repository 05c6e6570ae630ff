/**
 * A volume has a size (issue 18): each is its own ext4 file system, so a
 * sandbox writing past the size gets ENOSPC, the content API answers 507,
 * and the host disk loses no more than the size.
 */
import { randomUUID } from "node:crypto";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Sandbox, Volume } from "e2b";
import {
  connectionOpts,
  startService,
  useService,
  type Endpoint,
  type TestService,
} from "../support/service";

jest.setTimeout(180_000);

let service: TestService;
let opts: Endpoint;
useService((svc) => {
  service = svc;
  opts = connectionOpts(svc);
});

/** Creates a volume through the raw API, with the `sizeMB` extension. */
async function createVolume(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${opts.apiUrl}/volumes`, {
    method: "POST",
    headers: { "X-API-Key": opts.apiKey, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

it("fails with ENOSPC inside a sandbox writing past the volume's size, the host unaffected", async () => {
  const res = await createVolume({ name: "small-vol", sizeMB: 32 });
  expect(res.status).toBe(201);
  const { volumeID } = (await res.json()) as { volumeID: string };
  const vol = await Volume.connect(volumeID, opts);
  const image = path.join(service.dataDir, "volumes", volumeID, "volume.img");
  const sbx = await Sandbox.create({
    ...opts,
    volumeMounts: { "/mnt/v": vol },
    timeoutMs: 120_000,
  });
  try {
    const r = await sbx.commands
      .run("dd if=/dev/zero of=/mnt/v/fill bs=1M count=64 conv=fsync")
      .catch((e: { result?: { stderr: string; exitCode: number } }) => e.result);
    expect(r?.exitCode).not.toBe(0);
    expect(r?.stderr).toMatch(/No space left on device/);
    // At most the volume's size was taken from the host disk.
    const st = await fs.stat(image);
    expect(st.blocks * 512).toBeLessThanOrEqual(32 * 1024 * 1024);
    const written = Number((await sbx.commands.run("stat -c %s /mnt/v/fill")).stdout.trim());
    expect(written).toBeGreaterThan(16 * 1024 * 1024);
    expect(written).toBeLessThan(32 * 1024 * 1024);
  } finally {
    await sbx.kill();
  }
  // The content API says the volume is full.
  const put = await fetch(
    `${opts.apiUrl}/volumecontent/${volumeID}/file?path=${encodeURIComponent("/more.bin")}`,
    {
      method: "PUT",
      headers: { Authorization: `Bearer ${vol.token}`, "Content-Type": "application/octet-stream" },
      body: new Uint8Array(8 * 1024 * 1024),
    },
  );
  expect(put.status).toBe(507);
  expect(await put.text()).toMatch(/out of space writing '\/more.bin'/);
  // Answered before the body was read: the connection closes, so no next
  // request on it is taken for the rest of this body (and left unanswered).
  expect(put.headers.get("connection")).toBe("close");
  // Freeing space makes it writable again.
  await vol.remove("/fill", { apiUrl: opts.apiUrl });
  expect((await vol.writeFile("/more.bin", "fits", { apiUrl: opts.apiUrl })).size).toBe(4);
});

it("gives a volume the default size when none is asked for", async () => {
  const vol = await Volume.create("default-size", opts);
  const sbx = await Sandbox.create({ ...opts, volumeMounts: { "/mnt/v": vol }, timeoutMs: 60_000 });
  try {
    const total = Number((await sbx.commands.run("df -B1M --output=size /mnt/v | tail -1")).stdout);
    expect(total).toBeGreaterThan(3900);
    expect(total).toBeLessThanOrEqual(4096);
  } finally {
    await sbx.kill();
  }
  expect((await vol.list("/", { apiUrl: opts.apiUrl })).map((e) => e.name)).toEqual([]);
});

it("fails when sizeMB is not a size, creating nothing", async () => {
  for (const sizeMB of [8, 1.5, "64", -1]) {
    const res = await createVolume({
      name: `bad-size-${String(sizeMB).replace(/\W/g, "")}`,
      sizeMB,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(
      /body\.sizeMB must be an integer from 16 to \d+ \(MiB\), got .*: leave it out for 4096 MiB/,
    );
  }
  expect((await Volume.list(opts)).map((v) => v.name)).not.toContainEqual(
    expect.stringMatching(/^bad-size/),
  );
});

it("keeps a volume made before sizes (a plain directory) working, without a limit", async () => {
  // GIVEN a data dir holding a volume of the earlier layout: a record without sizeMB and a plain data/
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "vol-old-layout-"));
  const volumeID = randomUUID();
  const dir = path.join(dataDir, "volumes", volumeID);
  await fs.mkdir(path.join(dir, "data"), { recursive: true });
  await fs.chown(path.join(dir, "data"), 1000, 1000);
  await fs.writeFile(path.join(dir, "data", "old.txt"), "from before");
  await fs.writeFile(
    path.join(dir, "volume.json"),
    JSON.stringify({ volumeID, name: "old-layout", createdAt: new Date().toISOString() }),
  );
  const old = await startService({ dataDir });
  try {
    // WHEN it is used through the API and a sandbox
    const o = connectionOpts(old);
    const vol = await Volume.connect(volumeID, o);
    expect(await vol.readFile("/old.txt", { apiUrl: o.apiUrl })).toBe("from before");
    const sbx = await Sandbox.create({ ...o, volumeMounts: { "/mnt/v": vol }, timeoutMs: 60_000 });
    try {
      await sbx.commands.run("echo from-sandbox > /mnt/v/new.txt");
    } finally {
      await sbx.kill();
    }
    // THEN it works as before, and deletes
    expect(await vol.readFile("/new.txt", { apiUrl: o.apiUrl })).toBe("from-sandbox\n");
    expect(await Volume.destroy(volumeID, o)).toBe(true);
    expect(await fs.readdir(path.join(dataDir, "volumes"))).toEqual([]);
  } finally {
    await old.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

it("leaves out, and in place, a volume whose image cannot be mounted, serving the others", async () => {
  // GIVEN a data dir whose volume image is not a file system
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "vol-broken-image-"));
  const volumeID = randomUUID();
  const dir = path.join(dataDir, "volumes", volumeID);
  await fs.mkdir(path.join(dir, "data"), { recursive: true });
  await fs.writeFile(path.join(dir, "volume.img"), Buffer.alloc(1024 * 1024));
  await fs.writeFile(
    path.join(dir, "volume.json"),
    JSON.stringify({ volumeID, name: "broken", createdAt: new Date().toISOString(), sizeMB: 16 }),
  );
  const logs: string[] = [];
  const svc = await startService({ dataDir, log: (line) => logs.push(line) });
  try {
    // THEN the service runs without it, says why, and keeps its files for repair
    const o = connectionOpts(svc);
    expect((await Volume.list(o)).map((v) => v.volumeId)).not.toContain(volumeID);
    expect(logs.join("\n")).toMatch(new RegExp(`volume ${volumeID} is left out: .*mount`));
    expect((await fs.readdir(dir)).sort()).toEqual(["data", "volume.img", "volume.json"]);
    expect((await Volume.create("still-works", o)).name).toBe("still-works");
  } finally {
    await svc.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
