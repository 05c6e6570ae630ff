/**
 * Volumes through the official SDK (e2b@2.51.0) against the local service:
 * management, every content operation, mounts into sandboxes (shared,
 * written back), confinement of content paths, and a restart.
 */
import { existsSync } from "node:fs";
import { Sandbox, Volume, VolumeError, VolumeNotFoundError, VolumePathNotFoundError } from "e2b";
import { connectionOpts, startService, type TestService } from "../support/service";

interface Opts {
  apiKey: string;
  apiUrl: string;
  sandboxUrl: string;
}

describe("volumes with e2b@2.51.0", () => {
  let service: TestService;
  let opts: Opts;

  beforeAll(async () => {
    service = await startService();
    opts = connectionOpts(service);
  });
  afterAll(async () => {
    await service?.close();
  });

  it("creates, connects to, gets, lists and destroys volumes", async () => {
    const vol = await Volume.create("mgmt-vol", opts);
    expect(vol.volumeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(vol.name).toBe("mgmt-vol");
    expect(vol.token).toMatch(/^[0-9a-f]{64}$/);
    const info = await Volume.getInfo(vol.volumeId, opts);
    expect(info).toMatchObject({ volumeId: vol.volumeId, name: "mgmt-vol", token: vol.token });
    const again = await Volume.connect(vol.volumeId, opts);
    expect(again.token).toBe(vol.token);
    expect(await Volume.list(opts)).toContainEqual({ volumeId: vol.volumeId, name: "mgmt-vol" });
    await expect(Volume.create("mgmt-vol", opts)).rejects.toThrow(/already exists/);
    await expect(Volume.create("bad name!", opts)).rejects.toThrow(/volume name/);
    expect(await Volume.destroy(vol.volumeId, opts)).toBe(true);
    expect(await Volume.destroy(vol.volumeId, opts)).toBe(false);
    await expect(Volume.getInfo(vol.volumeId, opts)).rejects.toBeInstanceOf(VolumeNotFoundError);
  });

  it("does every content operation with the volume's token", async () => {
    const vol = await Volume.create("content-vol", opts);
    const c = { apiUrl: opts.apiUrl };
    const dir = await vol.makeDir("/a/b", { ...c, force: true });
    expect(dir).toMatchObject({ type: "directory", path: "/a/b", uid: 1000, gid: 1000 });
    await expect(vol.makeDir("/x/y", c)).rejects.toBeInstanceOf(VolumePathNotFoundError);
    const written = await vol.writeFile("/a/b/hello.txt", "hello volume", c);
    expect(written).toMatchObject({ type: "file", name: "hello.txt", size: 12, mode: 0o644 });
    expect(await vol.readFile("/a/b/hello.txt", c)).toBe("hello volume");
    const bytes = await vol.readFile("/a/b/hello.txt", { ...c, format: "bytes" });
    expect(Buffer.from(bytes).toString()).toBe("hello volume");
    // A streamed upload and download of 3 MiB.
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    const upload = new ReadableStream<Uint8Array>({
      start(ctrl) {
        for (let i = 0; i < 3; i++) ctrl.enqueue(big.subarray(i * 1048576, (i + 1) * 1048576));
        ctrl.close();
      },
    });
    await vol.writeFile("/big.bin", upload, c);
    const stream = await vol.readFile("/big.bin", { ...c, format: "stream" });
    let total = 0;
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) total += chunk.length;
    expect(total).toBe(big.length);
    expect((await vol.getInfo("/a/b/hello.txt", c)).size).toBe(12);
    expect(await vol.exists("/a/b/hello.txt", c)).toBe(true);
    expect(await vol.exists("/a/nope", c)).toBe(false);
    const listed = await vol.list("/", { ...c, depth: 3 });
    expect(listed.map((e) => e.path).sort()).toEqual(["/a", "/a/b", "/a/b/hello.txt", "/big.bin"]);
    expect((await vol.list("/", c)).map((e) => e.path).sort()).toEqual(["/a", "/big.bin"]);
    const updated = await vol.updateMetadata("/a/b/hello.txt", { mode: 0o600, uid: 1234 }, c);
    expect(updated).toMatchObject({ mode: 0o600, uid: 1234 });
    await vol.remove("/a", c);
    expect(await vol.exists("/a/b/hello.txt", c)).toBe(false);
    await expect(vol.remove("/a", c)).rejects.toBeInstanceOf(VolumePathNotFoundError);
    // A wrong token is a 401, whatever the path.
    const forged = new Volume(vol.volumeId, vol.name, "0".repeat(64));
    await expect(forged.readFile("/big.bin", c)).rejects.toThrow(/volume token/);
  });

  it("refuses paths escaping the volume through '..' or symlinks, changing nothing", async () => {
    const vol = await Volume.create("escape-vol", opts);
    const c = { apiUrl: opts.apiUrl };
    await expect(vol.readFile("/../../../etc/passwd", c)).rejects.toThrow(/'\.\.'/);
    await expect(vol.writeFile("/a/../../x", "x", c)).rejects.toThrow(/'\.\.'/);
    // A sandbox plants symlinks to the host's /etc in the volume.
    const sbx = await Sandbox.create({
      ...opts,
      volumeMounts: { "/mnt/esc": vol },
      timeoutMs: 120_000,
    });
    try {
      await sbx.commands.run(
        "ln -s /etc /mnt/esc/etc-dir && ln -s /etc/passwd /mnt/esc/pw && mkfifo /mnt/esc/fifo",
      );
    } finally {
      await sbx.kill();
    }
    await expect(vol.readFile("/pw", c)).rejects.toThrow(/symlink/);
    await expect(vol.readFile("/etc-dir/passwd", c)).rejects.toThrow(/symlink/);
    await expect(vol.writeFile("/etc-dir/planted", "x", c)).rejects.toThrow(/symlink/);
    expect(existsSync("/etc/planted")).toBe(false);
    await expect(vol.list("/etc-dir", c)).rejects.toThrow(/symlink/);
    await expect(vol.remove("/etc-dir/hostname", c)).rejects.toThrow(/symlink/);
    expect(existsSync("/etc/hostname")).toBe(true);
    // A FIFO is refused at once instead of hanging the service.
    await expect(vol.readFile("/fifo", c)).rejects.toThrow(/not a regular file/);
    const link = await vol.getInfo("/pw", c);
    expect(link).toMatchObject({ type: "symlink", target: "/etc/passwd" });
    await expect(vol.updateMetadata("/pw", { mode: 0o777 }, c)).rejects.toThrow(/symlink/);
  });

  it("mounts a volume into two sandboxes at once, owned by user, and writes back", async () => {
    const vol = await Volume.create("shared-vol", opts);
    const c = { apiUrl: opts.apiUrl };
    await vol.writeFile("/seed.txt", "seeded", c);
    const a = await Sandbox.create({
      ...opts,
      volumeMounts: { "/mnt/shared": vol },
      timeoutMs: 120_000,
    });
    const b = await Sandbox.create({
      ...opts,
      volumeMounts: { "/home/user/work": "shared-vol" },
      timeoutMs: 120_000,
    });
    try {
      expect((await a.commands.run("cat /mnt/shared/seed.txt")).stdout).toBe("seeded");
      expect((await a.commands.run("stat -c %U /mnt/shared")).stdout.trim()).toBe("user");
      await a.commands.run("echo from-a > /mnt/shared/a.txt");
      expect((await b.commands.run("cat /home/user/work/a.txt")).stdout).toBe("from-a\n");
      await b.files.write("/home/user/work/b.txt", "from-b");
      expect(await vol.readFile("/b.txt", c)).toBe("from-b");
      expect((await vol.getInfo("/a.txt", c)).uid).toBe(1000);
      const info = await a.getInfo();
      expect(info.volumeMounts).toEqual([{ name: "shared-vol", path: "/mnt/shared" }]);
      // Deleting a mounted volume succeeds, as on E2B, and its content is gone.
      expect(await Volume.destroy(vol.volumeId, opts)).toBe(true);
      expect((await a.commands.run("ls -A /mnt/shared")).stdout).toBe("");
    } finally {
      await Promise.all([a.kill(), b.kill()]);
    }
  });

  it("rejects bad volumeMounts with a 400 and creates nothing", async () => {
    await Volume.create("mount-checks", opts);
    const before = (await Sandbox.list(opts).nextItems()).length;
    const bad = async (volumeMounts: Record<string, string>, pattern: RegExp): Promise<void> => {
      await expect(Sandbox.create({ ...opts, volumeMounts, timeoutMs: 60_000 })).rejects.toThrow(
        pattern,
      );
    };
    await bad({ "/mnt/x": "no-such-volume" }, /volume 'no-such-volume' not found/);
    await bad({ "mnt/x": "mount-checks" }, /absolute/);
    await bad({ "/mnt/../etc": "mount-checks" }, /normalised/);
    await bad({ "/proc/x": "mount-checks" }, /inside \/proc/);
    await bad({ "/mnt/x": "mount-checks", "/mnt/x/y": "mount-checks" }, /collides/);
    expect((await Sandbox.list(opts).nextItems()).length).toBe(before);
  });

  it("keeps volumes and their content across a service restart", async () => {
    const vol = await Volume.create("durable-vol", opts);
    await vol.writeFile("/keep.txt", "kept", { apiUrl: opts.apiUrl });
    service = await service.restart();
    opts = connectionOpts(service);
    const back = await Volume.connect(vol.volumeId, opts);
    expect(back.token).toBe(vol.token);
    expect(await back.readFile("/keep.txt", { apiUrl: opts.apiUrl })).toBe("kept");
    await expect(Volume.getInfo("not-a-uuid", opts)).rejects.toBeInstanceOf(VolumeError);
  });
});
