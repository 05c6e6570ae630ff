/**
 * The typed control client's volume and secret methods against the real
 * local service: validation before any request, streamed file transfer,
 * the token on content calls, error codes, and no secret value in errors.
 */
import { createHash, randomBytes } from "node:crypto";
import { createControlClient, type ControlClient } from "../../src/client/control";
import { resolveConfig } from "../../src/config";
import { SandboxIacError } from "../../src/errors";
import { codeOf } from "../support/errors";
import { startService, type TestService } from "../support/service";

let svc: TestService;
let api: ControlClient;
const requests: string[] = [];

beforeAll(async () => {
  svc = await startService();
  api = createControlClient({
    config: resolveConfig({ apiUrl: svc.apiUrl, apiKey: svc.apiKey, env: {} }),
    fetch: ((req: Request) => {
      requests.push(`${req.method} ${new URL(req.url).pathname}`);
      return fetch(req);
    }) as typeof fetch,
    log: () => undefined,
  });
});
afterAll(async () => {
  await svc?.close();
});

describe("volume methods", () => {
  it("creates, gets, lists and deletes a volume", async () => {
    const vol = await api.createVolume("client-vol");
    expect(vol.token).toMatch(/^[0-9a-f]{64}$/);
    expect(await api.getVolume(vol.volumeID)).toEqual(vol);
    expect(await api.listVolumes()).toContainEqual({ volumeID: vol.volumeID, name: "client-vol" });
    expect(await codeOf(api.createVolume("client-vol"))).toBe("conflict");
    await api.deleteVolume(vol.volumeID);
    expect(await codeOf(api.getVolume(vol.volumeID))).toBe("not_found");
  });

  it("refuses a bad name before sending anything", async () => {
    const before = requests.length;
    const err = await api.createVolume("no spaces").catch((e: unknown) => e);
    expect(SandboxIacError.hasCode(err, "invalid_argument")).toBe(true);
    expect((err as Error).message).toMatch(/name/);
    expect(requests.length).toBe(before);
  });

  it("streams a 5 MiB file up and down and runs every content operation", async () => {
    const vol = await api.createVolume("client-content");
    const data = randomBytes(5 * 1024 * 1024);
    let offset = 0;
    const upload = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (offset >= data.length) return ctrl.close();
        ctrl.enqueue(data.subarray(offset, offset + 256 * 1024));
        offset += 256 * 1024;
      },
    });
    const written = await api.writeVolumeFile(vol, "/deep/dir/blob.bin", upload, { force: true });
    expect(written).toMatchObject({ size: data.length, type: "file", uid: 1000 });
    const hash = createHash("sha256");
    for await (const chunk of (await api.readVolumeFile(
      vol,
      "/deep/dir/blob.bin",
    )) as unknown as AsyncIterable<Uint8Array>)
      hash.update(chunk);
    expect(hash.digest("hex")).toBe(createHash("sha256").update(data).digest("hex"));
    await api.writeVolumeFile(vol, "/note.txt", "text body", { mode: 0o640 });
    expect((await api.statVolumePath(vol, "/note.txt")).mode).toBe(0o640);
    expect((await api.makeVolumeDir(vol, "/made")).type).toBe("directory");
    expect((await api.listVolumeDir(vol, "/", 3)).map((e) => e.path).sort()).toEqual([
      "/deep",
      "/deep/dir",
      "/deep/dir/blob.bin",
      "/made",
      "/note.txt",
    ]);
    expect((await api.updateVolumePath(vol, "/note.txt", { mode: 0o600 })).mode).toBe(0o600);
    await api.removeVolumePath(vol, "/deep");
    expect(await codeOf(api.statVolumePath(vol, "/deep"))).toBe("not_found");
    expect(await codeOf(api.statVolumePath({ ...vol, token: "f".repeat(64) }, "/made"))).toBe(
      "unauthenticated",
    );
    expect(await codeOf(api.statVolumePath(vol, "/../etc"))).toBe("invalid_argument");
  });
});

describe("secret methods", () => {
  const VALUE = "client-secret-value-3c2b1a";

  it("creates, updates, reads, lists and deletes a secret", async () => {
    const s = await api.createSecret("Client-Token", VALUE, { env: "test" });
    expect(s).toMatchObject({ name: "client-token", currentVersion: 1, metadata: { env: "test" } });
    expect(JSON.stringify(s)).not.toContain(VALUE);
    const u = await api.updateSecret(s.secretID, `${VALUE}-2`);
    expect(u.currentVersion).toBe(2);
    expect(await api.getSecret("client-token")).toEqual(u);
    const all = [];
    for await (const item of api.listSecrets()) all.push(item);
    expect(all.map((x) => x.secretID)).toContain(s.secretID);
    await api.deleteSecret(s.secretID);
    expect(await codeOf(api.getSecret(s.secretID))).toBe("not_found");
  });

  it("refuses bad input before sending anything and never quotes the value", async () => {
    const before = requests.length;
    expect(await codeOf(api.createSecret("sec_reserved", VALUE))).toBe("invalid_argument");
    expect(await codeOf(api.createSecret("bad name", VALUE))).toBe("invalid_argument");
    const err = await api.createSecret("ok-name", 42 as unknown as string).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/value must be a string/);
    expect(requests.length).toBe(before);
    const dup = await api.createSecret("dup-secret", VALUE);
    const clash = await api.createSecret("dup-secret", VALUE).catch((e: unknown) => e);
    expect(SandboxIacError.hasCode(clash, "conflict")).toBe(true);
    expect((clash as Error).message).not.toContain(VALUE);
    await api.deleteSecret(dup.secretID);
  });
});
