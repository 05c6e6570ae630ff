/**
 * Conformance: the filesystem through the official SDK (e2b@2.51.0): every
 * shape of write and read, directory operations, watch and signed URLs.
 */
import { createHash, randomBytes } from "node:crypto";
import * as http from "node:http";
import { gunzipSync } from "node:zlib";
import { Sandbox } from "e2b";
import { eventually } from "../support/eventually";
import { connectionOpts } from "../support/service";
import { sdkSandbox } from "./support";

describe("files with e2b@2.51.0", () => {
  const env = sdkSandbox((service) =>
    Sandbox.create({ ...connectionOpts(service), timeoutMs: 300_000 }),
  );

  it("writes a single file as multipart and reads it back as text, bytes, blob and stream", async () => {
    const info = await env.sbx.files.write("/home/user/one.txt", "one\n");
    expect(info.path).toBe("/home/user/one.txt");
    expect(await env.sbx.files.read("/home/user/one.txt")).toBe("one\n");
    expect(
      Buffer.from(await env.sbx.files.read("/home/user/one.txt", { format: "bytes" })).toString(),
    ).toBe("one\n");
    expect(await (await env.sbx.files.read("/home/user/one.txt", { format: "blob" })).text()).toBe(
      "one\n",
    );
    const stream = await env.sbx.files.read("/home/user/one.txt", { format: "stream" });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe("one\n");
  });

  it("writes several files in one request, relative paths landing in the home directory", async () => {
    const infos = await env.sbx.files.write([
      { path: "multi/a.txt", data: "a" },
      { path: "/tmp/multi-b.txt", data: "b" },
    ]);
    expect(infos.map((i) => i.path).sort()).toEqual(["/home/user/multi/a.txt", "/tmp/multi-b.txt"]);
    expect(await env.sbx.files.read("/home/user/multi/a.txt")).toBe("a");
  });

  it("writes with octet-stream and gzip, with metadata, and reads back with gzip", async () => {
    const data = randomBytes(3 * 1024 * 1024);
    await env.sbx.files.write("/home/user/bin.dat", new Blob([data]), {
      useOctetStream: true,
      gzip: true,
      metadata: { origin: "conformance" },
    });
    const back = Buffer.from(
      await env.sbx.files.read("/home/user/bin.dat", { format: "bytes", gzip: true }),
    );
    expect(createHash("sha256").update(back).digest("hex")).toBe(
      createHash("sha256").update(data).digest("hex"),
    );
    const info = await env.sbx.files.getInfo("/home/user/bin.dat");
    expect(info.size).toBe(data.length);
    expect(info.type).toBe("file");
  });

  it("keeps UTF-8 paths of multipart uploads intact", async () => {
    const infos = await env.sbx.files.write([
      { path: "/home/user/ünïcødé/文件.txt", data: "utf8" },
    ]);
    expect(infos.map((i) => i.path)).toEqual(["/home/user/ünïcødé/文件.txt"]);
    expect(await env.sbx.files.read("/home/user/ünïcødé/文件.txt")).toBe("utf8");
  });

  it("replaces a file's metadata on every upload, clearing it when none is sent", async () => {
    await env.sbx.files.write("/home/user/meta.txt", "v1", { metadata: { owner: "team-a" } });
    expect((await env.sbx.files.getInfo("/home/user/meta.txt")).metadata).toEqual({
      owner: "team-a",
    });
    await env.sbx.files.write("/home/user/meta.txt", "v2");
    expect((await env.sbx.files.getInfo("/home/user/meta.txt")).metadata ?? {}).toEqual({});
  });

  it("lists, checks, makes, renames and removes files and directories", async () => {
    expect(await env.sbx.files.makeDir("/home/user/dir/sub")).toBe(true);
    expect(await env.sbx.files.makeDir("/home/user/dir/sub")).toBe(false);
    await env.sbx.files.write("/home/user/dir/sub/f.txt", "f");
    const entries = await env.sbx.files.list("/home/user/dir", { depth: 2 });
    expect(entries.map((e) => e.path)).toEqual(["/home/user/dir/sub", "/home/user/dir/sub/f.txt"]);
    expect(entries[0].type).toBe("dir");
    expect(await env.sbx.files.exists("/home/user/dir/sub/f.txt")).toBe(true);
    const moved = await env.sbx.files.rename(
      "/home/user/dir/sub/f.txt",
      "/home/user/dir/g/moved.txt",
    );
    expect(moved.path).toBe("/home/user/dir/g/moved.txt");
    expect(await env.sbx.files.exists("/home/user/dir/sub/f.txt")).toBe(false);
    await env.sbx.files.remove("/home/user/dir");
    expect(await env.sbx.files.exists("/home/user/dir")).toBe(false);
    // Removing what is not there succeeds.
    await env.sbx.files.remove("/home/user/dir");
  });

  it("fails reading a missing file with FileNotFoundError", async () => {
    await expect(env.sbx.files.read("/home/user/missing.txt")).rejects.toThrow(
      /not (exist|found)/i,
    );
  });

  it("watches a directory and sees a write", async () => {
    await env.sbx.files.makeDir("/home/user/watched");
    const events: Array<{ name: string; type: string }> = [];
    const handle = await env.sbx.files.watchDir("/home/user/watched", (e) => {
      events.push({ name: e.name, type: String(e.type) });
    });
    try {
      await env.sbx.files.write("/home/user/watched/new.txt", "hello");
      await eventually(() => events.some((e) => e.name === "new.txt" && e.type === "write"), {
        timeoutMs: 10_000,
        intervalMs: 50,
      });
    } finally {
      await handle.stop();
    }
  });

  it("serves signed download and upload URLs requested with no extra headers", async () => {
    await env.sbx.files.write("/home/user/signed.txt", "signed content");
    const url = await env.sbx.downloadUrl("/home/user/signed.txt", { useSignatureExpiration: 60 });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("signed content");

    const tampered = url.replace("signed.txt", "other.txt");
    expect((await fetch(tampered)).status).toBe(401);

    const upload = await env.sbx.uploadUrl("/home/user/uploaded.txt");
    const form = new FormData();
    form.append("file", new Blob(["via url"]), "/home/user/uploaded.txt");
    const up = await fetch(upload, { method: "POST", body: form });
    expect(up.status).toBe(200);
    expect(await env.sbx.files.read("/home/user/uploaded.txt")).toBe("via url");
  });

  it("answers a download even root may not open with 403, not 401", async () => {
    // Write-only and owned by the host's root, which the sandbox's user
    // namespace does not map: its root gets EACCES opening it for reading.
    const url = await env.sbx.downloadUrl("/proc/sys/vm/drop_caches", { user: "root" });
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      code: 403,
      message: "cannot open '/proc/sys/vm/drop_caches': permission denied",
    });
  });

  it("serves gzip-encoded downloads when asked", async () => {
    await env.sbx.files.write("/home/user/z.txt", "zipped".repeat(100));
    const url = await env.sbx.downloadUrl("/home/user/z.txt");
    // node:http hands over the bytes as sent (fetch would decode them itself).
    const { encoding, raw } = await new Promise<{ encoding: string | undefined; raw: Buffer }>(
      (resolve, reject) => {
        http
          .get(url, { headers: { "accept-encoding": "gzip" } }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () =>
              resolve({ encoding: res.headers["content-encoding"], raw: Buffer.concat(chunks) }),
            );
            res.on("error", reject);
          })
          .on("error", reject);
      },
    );
    expect(encoding).toBe("gzip");
    expect(raw.length).toBeLessThan(600);
    expect(gunzipSync(raw).toString("utf8")).toBe("zipped".repeat(100));
  });

  it("serves plain bytes to fetch's default Accept-Encoding, as the SDK's default read sends", async () => {
    const data = randomBytes(256 * 1024);
    await env.sbx.files.write("/home/user/plain.bin", new Blob([data]));
    const url = await env.sbx.downloadUrl("/home/user/plain.bin");
    // Node's fetch adds `Accept-Encoding: gzip, deflate` itself.
    const res = await fetch(url);
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("content-length")).toBe(String(data.length));
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    const viaSdk = await env.sbx.files.read("/home/user/plain.bin", { format: "bytes" });
    expect(Buffer.from(viaSdk).equals(data)).toBe(true);
  });
});
