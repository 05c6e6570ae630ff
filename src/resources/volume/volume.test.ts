import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { volumeLifecycle } from "./volume.lifecycle";

let baseDir: string;
beforeAll(() => {
  baseDir = mkdtempSync(path.join(tmpdir(), "volume-unit-"));
  writeFileSync(path.join(baseDir, "seed.txt"), "one");
});
afterAll(() => rmSync(baseDir, { recursive: true, force: true }));

describe("Volume check()", () => {
  it("refuses a bad name, a relative or escaping destination, and a destination given twice", () => {
    const bad = volumeLifecycle.check({
      name: "no spaces",
      files: [
        { source: "a", destination: "rel" },
        { source: "b", destination: "/x/../etc" },
      ],
    });
    expect(bad.failures.map((f) => f.property).sort()).toEqual([
      "files.0.destination",
      "files.1.destination",
      "name",
    ]);
    const twice = volumeLifecycle.check({
      name: "ok",
      files: [
        { source: "a", destination: "/same" },
        { source: "b", destination: "/same" },
      ],
    });
    expect(twice.failures[0]?.reason).toMatch(/listed twice/);
  });
});

describe("Volume diff() and planOutputs()", () => {
  const files = [{ source: "seed.txt", destination: "/seed.txt" }];

  it("plans the digest from local files and sees a changed file as an in-place update", async () => {
    const planned = await volumeLifecycle.planOutputs!({ name: "v", files }, { baseDir });
    expect(planned.fileDigest?.["/seed.txt"]).toMatch(/^sha256:[0-9a-f]{64}\/644$/);
    const olds = { name: "v", files, volumeID: "id", fileDigest: planned.fileDigest! };
    expect((await volumeLifecycle.diff(olds, { name: "v", files }, { baseDir })).changes).toBe(
      false,
    );
    writeFileSync(path.join(baseDir, "seed.txt"), "two");
    const changed = await volumeLifecycle.diff(olds, { name: "v", files }, { baseDir });
    expect(changed).toMatchObject({ changes: true, updates: ["files"], replaces: [] });
    const renamed = await volumeLifecycle.diff(olds, { name: "w", files }, { baseDir });
    expect(renamed.replaces).toEqual(["name"]);
  });

  it("names an unreadable source", async () => {
    await expect(
      volumeLifecycle.planOutputs!(
        { name: "v", files: [{ source: "missing.txt", destination: "/m" }] },
        { baseDir },
      ),
    ).rejects.toThrow(/missing\.txt.*cannot be read/);
  });
});
