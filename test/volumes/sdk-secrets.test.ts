/**
 * Secrets through the official SDK (e2b@2.51.0) against the local service:
 * create, getInfo, list, exists, update, destroy; the value is never in any
 * response, nor in clear in the data dir or the service log.
 */
import { lstatSync, readFileSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";
import { Secret, SecretNotFoundError } from "e2b";
import { connectionOpts, startService, type TestService } from "../support/service";

const VALUE = "sk-live-9f8e7d6c5b4a-never-shown";
const NEW_VALUE = "sk-live-rotated-0a1b2c3d-never-shown";

describe("secrets with e2b@2.51.0", () => {
  let dataDir: string;
  let service: TestService;
  let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
  const logLines: string[] = [];
  const bodies: string[] = [];
  /** A raw request whose response body is kept, to check that none carries a value. */
  const raw = async (method: string, url: string, body?: unknown): Promise<number> => {
    const res = await fetch(`${opts.apiUrl}${url}`, {
      method,
      headers: { "X-API-Key": opts.apiKey, "Content-Type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    bodies.push(await res.text());
    return res.status;
  };

  beforeAll(async () => {
    service = await startService({ log: (l) => logLines.push(l) });
    dataDir = service.dataDir;
    opts = connectionOpts(service);
  });
  afterAll(async () => {
    await service?.close();
  });

  it("creates, reads, lists, updates and destroys a secret, never answering its value", async () => {
    const created = await Secret.create("OpenAI-Key", VALUE, { ...opts, metadata: { team: "ml" } });
    expect(created).toMatchObject({ name: "openai-key", version: 1, metadata: { team: "ml" } });
    expect(created.secretId).toMatch(/^sec_[0-9a-f]{24}$/);
    expect(Object.keys(created).sort()).toEqual(
      ["createdAt", "metadata", "name", "secretId", "updatedAt", "version"].sort(),
    );
    const byName = await Secret.getInfo("openai-key", opts);
    const byId = await Secret.getInfo(created.secretId, opts);
    expect(byName).toEqual(byId);
    expect(await Secret.exists("OPENAI-KEY", opts)).toBe(true);
    expect(await Secret.exists("nope", opts)).toBe(false);
    await expect(Secret.getInfo("nope", opts)).rejects.toBeInstanceOf(SecretNotFoundError);
    await expect(Secret.create("openai-key", "x", opts)).rejects.toThrow(/already exists/);

    const updated = await Secret.update("openai-key", NEW_VALUE, opts);
    expect(updated.version).toBe(2);
    expect(updated.metadata).toEqual({ team: "ml" });
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());

    expect(await raw("GET", "/secrets")).toBe(200);
    expect(await raw("GET", `/secrets/${created.secretId}`)).toBe(200);
    expect(await raw("POST", "/secrets/openai-key", { value: NEW_VALUE })).toBe(200);
    expect(await raw("POST", "/secrets", { name: "raw-one", value: VALUE })).toBe(201);
    expect(bodies.join("\n")).toContain("openai-key");

    const paginator = Secret.list(opts);
    const all = [];
    while (paginator.hasNext) all.push(...(await paginator.nextItems()));
    expect(all.map((s) => s.name)).toContain("openai-key");

    expect(await Secret.destroy(created.secretId, opts)).toBe(true);
    expect(await Secret.destroy(created.secretId, opts)).toBe(false);
    await expect(Secret.update("openai-key", "x", opts)).rejects.toBeInstanceOf(
      SecretNotFoundError,
    );
  });

  it("pages through secrets with limit and X-Next-Token", async () => {
    for (const n of ["page-a", "page-b", "page-c"]) await Secret.create(n, VALUE, opts);
    const paginator = Secret.list({ ...opts, limit: 2 });
    const first = await paginator.nextItems();
    expect(first).toHaveLength(2);
    expect(paginator.hasNext).toBe(true);
    const rest = [];
    while (paginator.hasNext) rest.push(...(await paginator.nextItems()));
    expect([...first, ...rest].map((s) => s.name)).toEqual([
      "raw-one",
      "page-a",
      "page-b",
      "page-c",
    ]);
  });

  it("rejects bad names with a clear 400 and stores nothing", async () => {
    const before = await Secret.list(opts).nextItems();
    for (const name of ["has space", "sec_reserved", "x".repeat(129), "semi;colon"]) {
      await expect(Secret.create(name, VALUE, opts)).rejects.toThrow(/body\.name/);
    }
    // A value of the wrong type is refused without being repeated.
    const res = await fetch(`${opts.apiUrl}/secrets`, {
      method: "POST",
      headers: { "X-API-Key": opts.apiKey, "Content-Type": "application/json" },
      body: `{"name": "broken", "value": ${JSON.stringify(VALUE)}`,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain(VALUE);
    expect(await Secret.list(opts).nextItems()).toEqual(before);
  });

  it("keeps values encrypted at rest under a 0600 key and out of every response and log", () => {
    // The service's own files: not the layers (a copy of the host's) nor the
    // sandboxes' disk images (sparse, GiBs; no secret is ever given to a sandbox).
    const files = readdirSync(dataDir, { recursive: true, encoding: "utf8" })
      .filter((f) => !f.startsWith("layers") && !f.startsWith("sandboxes"))
      .map((f) => path.join(dataDir, f))
      .filter((f) => lstatSync(f).isFile());
    expect(files).toContain(path.join(dataDir, "secrets.json"));
    for (const f of files) {
      const text = readFileSync(f).toString("latin1");
      expect(text).not.toContain(VALUE);
      expect(text).not.toContain(NEW_VALUE);
    }
    expect(statSync(path.join(dataDir, "secrets.key")).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(dataDir, "secrets.json"), "utf8")).toContain('"iv"');
    for (const line of [...logLines, ...bodies]) {
      expect(line).not.toContain(VALUE);
      expect(line).not.toContain(NEW_VALUE);
    }
  });
});
