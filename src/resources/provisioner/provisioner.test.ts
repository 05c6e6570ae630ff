import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync, mkdirSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { resolveConfig } from "../../config";
import { buildManifest, compareManifest, digestOf } from "./manifest";
import { provisionerLifecycle } from "./provisioner.lifecycle";
import type { ProvisionerOutputs } from "./provisioner.args";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

function tree(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "prov-manifest-"));
  mkdirSync(path.join(dir, "app", "bin"), { recursive: true });
  writeFileSync(path.join(dir, "app", "a.txt"), "a");
  writeFileSync(path.join(dir, "app", "bin", "run.sh"), "#!/bin/sh\necho run\n");
  chmodSync(path.join(dir, "app", "bin", "run.sh"), 0o755);
  writeFileSync(path.join(dir, "single.txt"), "single");
  return dir;
}

describe("provisioner check", () => {
  it("lists every failure with its property path", () => {
    const result = provisionerLifecycle.check({
      files: [{ source: "", destination: "/x" }],
      commands: [
        { run: "ls", cmd: "/bin/ls" },
        { timeoutSeconds: 0, run: "x" },
      ],
      concurrency: 0,
    });
    expect(result.inputs).toBeUndefined();
    const props = result.failures.map((f) => f.property).sort();
    expect(props).toEqual([
      "commands.0",
      "commands.1.timeoutSeconds",
      "concurrency",
      "files.0.source",
      "template",
    ]);
    expect(result.failures.find((f) => f.property === "template")!.reason).toMatch(
      /exactly one of `template`.*`sandboxID`/,
    );
  });

  it("fails when a sandbox id does not look like one", () => {
    const result = provisionerLifecycle.check({ sandboxID: "Not An Id" });
    expect(result.failures).toEqual([expect.objectContaining({ property: "sandboxID" })]);
    expect(result.failures[0].reason).toContain('got "Not An Id"');
  });

  it("fails when the snapshot's name is not a template name, before anything is created", () => {
    const result = provisionerLifecycle.check({
      template: "base",
      snapshot: { name: "team/app/extra" },
    });
    expect(result.failures).toEqual([expect.objectContaining({ property: "snapshot.name" })]);
    expect(result.failures[0].reason).toContain('e.g. "my-app-ready"');
  });

  it("accepts a Template's ref as its template", () => {
    const ref = "abcdefghij0123456789@1b2c3d4e-0000-4000-8000-000000000000";
    expect(provisionerLifecycle.check({ template: ref }).failures).toEqual([]);
  });

  it("accepts values still unknown during preview", () => {
    const result = provisionerLifecycle.check(
      { template: UNKNOWN, files: [{ source: "a", destination: UNKNOWN }] },
      { isUnknown: (v) => v === UNKNOWN },
    );
    expect(result.failures).toEqual([]);
  });
});

describe("manifest", () => {
  it("hashes a directory's contents and single files, keeping modes", async () => {
    const dir = tree();
    const manifest = await buildManifest(
      [
        { source: "app", destination: "/home/user/app" },
        { source: "single.txt", destination: "/tmp/single.txt" },
      ],
      dir,
    );
    expect(manifest.files.map((f) => f.remotePath).sort()).toEqual([
      "/home/user/app/a.txt",
      "/home/user/app/bin/run.sh",
      "/tmp/single.txt",
    ]);
    expect(manifest.files.find((f) => f.remotePath.endsWith("run.sh"))!.mode).toBe(0o755);
    expect(manifest.files.find((f) => f.remotePath === "/tmp/single.txt")!.sha256).toBe(
      createHash("sha256").update("single").digest("hex"),
    );
    expect(manifest.dirs.map((d) => d.remotePath)).toEqual([
      "/home/user/app",
      "/home/user/app/bin",
    ]);
  });

  it("fails when a source does not exist, naming it", async () => {
    await expect(
      buildManifest([{ source: "nope", destination: "/x" }], tree()),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      message: expect.stringContaining('"nope" does not exist'),
    });
  });

  it("re-uploads only changed files and removes undeclared ones", async () => {
    const dir = tree();
    const specs = [{ source: "app", destination: "/app" }];
    const before = digestOf(await buildManifest(specs, dir));
    writeFileSync(path.join(dir, "app", "a.txt"), "changed");
    writeFileSync(path.join(dir, "app", "new.txt"), "new");
    const after = await buildManifest(specs, dir);
    const stale = { ...before, "/app/gone.txt": { sha256: "0".repeat(64), mode: 0o644, size: 1 } };
    const changes = compareManifest(stale, after);
    expect(changes.upload.map((f) => f.remotePath).sort()).toEqual(["/app/a.txt", "/app/new.txt"]);
    expect(changes.remove).toEqual(["/app/gone.txt"]);
  });
});

describe("provisioner create", () => {
  it("fails on a missing source before it asks the service for a sandbox", async () => {
    const dir = tree();
    // Nothing listens here: a run that opened a sandbox first would fail unavailable instead.
    const config = resolveConfig({ apiKey: "e2b_0", apiUrl: "http://127.0.0.1:1", env: {} });
    const logged: string[] = [];
    await expect(
      provisionerLifecycle.create(
        {
          template: "base",
          files: [
            { source: "app", destination: "/home/user/app" },
            { source: "nope", destination: "/x" },
          ],
        },
        { config, baseDir: dir, log: (line) => logged.push(line) },
      ),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      message: expect.stringContaining('"nope" does not exist'),
    });
    expect(logged).toEqual([]);
  });
});

describe("provisioner diff", () => {
  const noFiles = { baseDir: "/nonexistent" };
  function outputs(extra: Partial<ProvisionerOutputs>): ProvisionerOutputs {
    return { template: "base", fileDigest: {}, commandsRun: 0, bytesUploaded: 0, ...extra };
  }

  it("replaces when the template changes and re-runs when commands change", async () => {
    const olds = outputs({ commands: [{ run: "a" }] });
    expect(
      await provisionerLifecycle.diff(
        olds,
        { template: "other", commands: [{ run: "a" }] },
        noFiles,
      ),
    ).toMatchObject({ changes: true, replaces: ["template"] });
    expect(
      await provisionerLifecycle.diff(
        olds,
        { template: "base", commands: [{ run: "b" }] },
        noFiles,
      ),
    ).toMatchObject({ changes: true, replaces: [], updates: ["commands"] });
    expect(
      await provisionerLifecycle.diff(
        olds,
        { template: "base", commands: [{ run: "a" }] },
        noFiles,
      ),
    ).toMatchObject({ changes: false });
  });

  it("runs again from scratch when the template's ref names a new build, deleting its snapshot first", async () => {
    const olds = outputs({
      template: "tpl0123456789abcdefg@build-1",
      snapshot: { name: "ready" },
      snapshotID: "ready:default",
    });
    const next = { template: "tpl0123456789abcdefg@build-2", snapshot: { name: "ready" } };
    expect(await provisionerLifecycle.diff(olds, next, noFiles)).toEqual({
      changes: true,
      replaces: ["template"],
      updates: [],
      deleteBeforeReplace: true,
    });
  });

  it("sees an edited local file although the declaration did not change", async () => {
    const dir = tree();
    const files = [{ source: "single.txt", destination: "/tmp/single.txt" }];
    const fileDigest = digestOf(await buildManifest(files, dir));
    const olds = outputs({ files, fileDigest });
    const baseDir = dir;
    expect(
      (await provisionerLifecycle.diff(olds, { template: "base", files }, { baseDir })).changes,
    ).toBe(false);
    writeFileSync(path.join(dir, "single.txt"), "edited");
    expect(
      await provisionerLifecycle.diff(olds, { template: "base", files }, { baseDir }),
    ).toMatchObject({ changes: true, updates: ["files"] });
  });
});
