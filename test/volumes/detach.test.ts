/**
 * Deleting a volume takes it away from every sandbox mounting it (issue 18):
 * running or paused, the sandbox no longer has it mounted, what it writes at
 * the mount path reaches nothing on the host, a neighbour's volume stays, and
 * the host keeps no mount or loop device of it. A sandbox that moved its
 * mount point and left a symlink to a host directory in its place changes
 * nothing on the host, and the deletion still completes.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Sandbox, Volume } from "e2b";
import { eventually } from "../support/eventually";
import { connectionOpts, useService, type Endpoint, type TestService } from "../support/service";

jest.setTimeout(300_000);

let service: TestService;
let opts: Endpoint;
useService((svc) => {
  service = svc;
  opts = connectionOpts(svc);
});

/** A volume of 32 MiB (quick to make). */
async function smallVolume(name: string): Promise<Volume> {
  const res = await fetch(`${opts.apiUrl}/volumes`, {
    method: "POST",
    headers: { "X-API-Key": opts.apiKey, "Content-Type": "application/json" },
    body: JSON.stringify({ name, sizeMB: 32 }),
  });
  expect(res.status).toBe(201);
  const { volumeID } = (await res.json()) as { volumeID: string };
  return Volume.connect(volumeID, opts);
}

/** `DELETE /volumes/{id}` as the owner does (`terraform destroy`). */
async function deleteVolume(volumeID: string): Promise<number> {
  const res = await fetch(`${opts.apiUrl}/volumes/${volumeID}`, {
    method: "DELETE",
    headers: { "X-API-Key": opts.apiKey },
  });
  return res.status;
}

/** Runs `cmd` as root in `sbx`; its stdout, or the failed result's. */
async function sh(sbx: Sandbox, cmd: string): Promise<{ exitCode: number; stdout: string }> {
  const r = await sbx.commands
    .run(cmd, { user: "root" })
    .catch((e: { result?: { exitCode: number; stdout: string } }) => e.result);
  return { exitCode: r?.exitCode ?? -1, stdout: r?.stdout ?? "" };
}

/** Whether `mountPoint` is a mount point of `sbx`'s own namespace. */
async function mountedIn(sbx: Sandbox, mountPoint: string): Promise<boolean> {
  const { stdout } = await sh(sbx, "cat /proc/self/mountinfo");
  return stdout.split("\n").some((line) => line.split(" ")[4] === mountPoint);
}

/** What the host still has of the volume: mount lines and loop devices naming its id. */
async function hostTraces(volumeID: string): Promise<string[]> {
  const mounts = (await fs.readFile("/proc/self/mountinfo", "utf8"))
    .split("\n")
    .filter((line) => line.includes(volumeID));
  const loops: string[] = [];
  for (const dev of await fs.readdir("/sys/block")) {
    const backing = await fs
      .readFile(`/sys/block/${dev}/loop/backing_file`, "utf8")
      .catch(() => "");
    if (backing.includes(volumeID)) loops.push(`${dev}: ${backing.trim()}`);
  }
  return [...mounts, ...loops];
}

it("takes a deleted volume away from running and paused sandboxes, leaving a neighbour's volume and nothing on the host", async () => {
  const doomed = await smallVolume(`doomed-${randomBytes(3).toString("hex")}`);
  const kept = await smallVolume(`kept-${randomBytes(3).toString("hex")}`);
  const [running, paused, neighbour] = await Promise.all([
    Sandbox.create({ ...opts, volumeMounts: { "/mnt/v": doomed }, timeoutMs: 240_000 }),
    Sandbox.create({ ...opts, volumeMounts: { "/data/v": doomed }, timeoutMs: 240_000 }),
    Sandbox.create({ ...opts, volumeMounts: { "/mnt/v": kept }, timeoutMs: 240_000 }),
  ]);
  try {
    // GIVEN both sandboxes see the volume, one of them paused with its memory (frozen)
    expect((await sh(running, "echo before > /mnt/v/before && cat /mnt/v/before")).stdout).toBe(
      "before\n",
    );
    expect((await sh(paused, "cat /data/v/before")).stdout).toBe("before\n");
    expect((await sh(neighbour, "echo mine > /mnt/v/mine")).exitCode).toBe(0);
    expect(await paused.pause({ keepMemory: true })).toBe(true);
    expect((await hostTraces(doomed.volumeId)).length).toBeGreaterThan(0);

    // WHEN the owner deletes it
    expect(await deleteVolume(doomed.volumeId)).toBe(204);

    // THEN the running sandbox has no mount there, and the directory left is its own disk's
    await eventually(async () => !(await mountedIn(running, "/mnt/v")));
    expect((await sh(running, "ls -A /mnt/v")).stdout).toBe("");
    expect((await sh(running, "echo after > /mnt/v/after && cat /mnt/v/after")).stdout).toBe(
      "after\n",
    );
    // AND the host keeps no mount and no loop device of it (what the sandbox wrote went nowhere else)
    await eventually(async () => (await hostTraces(doomed.volumeId)).length === 0);
    expect(await hostTraces(doomed.volumeId)).toEqual([]);
    await expect(fs.stat(path.join(service.dataDir, "volumes", doomed.volumeId))).rejects.toThrow(
      /ENOENT/,
    );
    // AND the paused one, resumed, has lost it too
    await Sandbox.connect(paused.sandboxId, opts);
    expect(await mountedIn(paused, "/data/v")).toBe(false);
    expect((await sh(paused, "ls -A /data/v")).stdout).toBe("");
    // AND the neighbour's volume is untouched
    expect(await mountedIn(neighbour, "/mnt/v")).toBe(true);
    expect((await sh(neighbour, "cat /mnt/v/mine")).stdout).toBe("mine\n");
    expect((await kept.readFile("/mine", { apiUrl: opts.apiUrl })).toString()).toBe("mine\n");
  } finally {
    await Promise.all([running.kill(), paused.kill(), neighbour.kill()]);
  }
});

it("completes the deletion, changing nothing on the host, when the sandbox moved its mount point and left a symlink to a host directory", async () => {
  const canaryDir = await fs.mkdtemp(path.join(os.tmpdir(), "vol-detach-canary-"));
  const vol = await smallVolume(`hostile-${randomBytes(3).toString("hex")}`);
  const sbx = await Sandbox.create({
    ...opts,
    volumeMounts: { "/mnt/c/v": vol },
    timeoutMs: 240_000,
  });
  try {
    // GIVEN a canary where the symlink leads on the host: a directory `v`, as the mount point was called
    await fs.mkdir(path.join(canaryDir, "v"));
    await fs.writeFile(path.join(canaryDir, "v", "canary"), "host");
    expect((await sh(sbx, "echo inside > /mnt/c/v/f")).exitCode).toBe(0);
    // AND the sandbox renamed the mount point's parent and put a symlink to the canary in its place
    const swap = await sh(
      sbx,
      `mv /mnt/c /mnt/c.moved && ln -s ${canaryDir} /mnt/c && readlink /mnt/c`,
    );
    expect(swap.stdout).toBe(`${canaryDir}\n`);
    expect(await mountedIn(sbx, "/mnt/c.moved/v")).toBe(true);

    // WHEN the owner deletes the volume
    expect(await deleteVolume(vol.volumeId)).toBe(204);

    // THEN the moved mount is gone from the sandbox, and from the host
    await eventually(async () => !(await mountedIn(sbx, "/mnt/c.moved/v")));
    expect((await sh(sbx, "ls -A /mnt/c.moved/v")).stdout).toBe("");
    await eventually(async () => (await hostTraces(vol.volumeId)).length === 0);
    // AND the host directory behind the symlink is as it was
    expect(await fs.readdir(canaryDir)).toEqual(["v"]);
    expect(await fs.readFile(path.join(canaryDir, "v", "canary"), "utf8")).toBe("host");
    // AND the volume is gone
    const res = await fetch(`${opts.apiUrl}/volumes/${vol.volumeId}`, {
      headers: { "X-API-Key": opts.apiKey },
    });
    expect(res.status).toBe(404);
  } finally {
    await sbx.kill();
    await fs.rm(canaryDir, { recursive: true, force: true });
  }
});
