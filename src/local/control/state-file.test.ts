import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { JsonStateWriter, readStateFile } from "./state-file";
import { catalogFileSchema } from "./templates/model";

describe("readStateFile()", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "state-file-"));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  const template = {
    templateID: "base",
    kind: "template",
    public: true,
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
    lastSpawnedAt: null,
    spawnCount: 0,
    builds: [],
    tags: {},
  };

  it("reads a valid file, keeping keys the schema does not name", async () => {
    const file = path.join(dir, "valid.json");
    await fs.writeFile(
      file,
      JSON.stringify({ version: 1, templates: [{ ...template, later: 1 }] }),
    );
    const read = await readStateFile(file, catalogFileSchema);
    expect(read?.templates[0]).toEqual({ ...template, later: 1 });
  });

  it("answers undefined when the file does not exist", async () => {
    expect(await readStateFile(path.join(dir, "absent.json"), catalogFileSchema)).toBeUndefined();
  });

  it("fails naming the file and the field when a field is wrong", async () => {
    const file = path.join(dir, "catalog.json");
    const bad = { ...template, kind: "image" };
    await fs.writeFile(file, JSON.stringify({ version: 1, templates: [bad] }));
    const err = await readStateFile(file, catalogFileSchema).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxIacError);
    expect((err as SandboxIacError).field).toBe("templates.0.kind");
    expect((err as SandboxIacError).message).toContain(`${file} has a bad field templates.0.kind`);
  });

  it("fails naming the file when it is not JSON", async () => {
    const file = path.join(dir, "torn.json");
    await fs.writeFile(file, '{"version": 1, "templ');
    await expect(readStateFile(file, catalogFileSchema)).rejects.toThrow(`${file} is not JSON`);
  });
});

describe("JsonStateWriter without fsync", () => {
  it("replaces the file with the latest snapshot, creating its folder, and leaves no temporary file", async () => {
    const dir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "state-writer-")), "data");
    const file = path.join(dir, "sandboxes.json");
    let n = 0;
    const writer = new JsonStateWriter(file, () => ({ n }), 2, { fsync: false });
    await writer.flush();
    n = 2;
    await Promise.all([writer.flush(), writer.flush()]);
    expect(JSON.parse(await fs.readFile(file, "utf8"))).toEqual({ n: 2 });
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(await fs.readdir(dir)).toEqual(["sandboxes.json"]);
    await fs.rm(path.dirname(dir), { recursive: true, force: true });
  });
});
