import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { templateArgsSchema, type TemplateInputs, type TemplateOutputs } from "./template.args";
import { resolveCopySource, spoolCopyArchive } from "./template.files";
import { templateLifecycle } from "./template.lifecycle";
import { templateNameProblem } from "../../wire/template-names";
import { resolveCopies, toWireBuild } from "./template.steps";
import { desiredTags, tagChanges } from "./template.tags";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const isUnknown = (v: unknown) => v === UNKNOWN;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "template-test-"));
  mkdirSync(path.join(dir, "files", "sub"), { recursive: true });
  writeFileSync(path.join(dir, "files", "a.txt"), "hello\n");
  writeFileSync(path.join(dir, "files", "sub", "b.sh"), "echo hi\n");
  chmodSync(path.join(dir, "files", "sub", "b.sh"), 0o755);
  writeFileSync(path.join(dir, "files", ".hidden"), "dot\n");
  symlinkSync("a.txt", path.join(dir, "files", "link"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function inputs(extra: Partial<TemplateInputs> = {}): TemplateInputs {
  return templateArgsSchema.parse({
    name: "tools",
    build: {
      fromTemplate: "base",
      steps: [
        { copy: { src: "files", dest: "/app", user: "root", mode: 0o755 } },
        { run: ["apt-get update", "apt-get install -y jq"], user: "root" },
        { env: { A: "1", B: "two" } },
        { workdir: "/app" },
        { user: "user" },
      ],
    },
    ...extra,
  });
}

function outputsFor(i: TemplateInputs): TemplateOutputs {
  return {
    ...i,
    templateID: "t1",
    buildID: "b1",
    ref: "t1@b1",
    names: [i.name],
    public: false,
    envdVersion: "0.6.13",
    buildStatus: "ready",
    imageDigest: "",
    filesHashes: resolveCopies(i, dir).map((c) => c.hash),
    currentTags: desiredTags(i.name, i.tags),
  };
}

/** diff resolves COPY sources against the base directory it is given (the program directory under Pulumi). */
async function diffIn(baseDir: string, olds: TemplateOutputs, news: TemplateInputs) {
  return templateLifecycle.diff(olds, news, { isUnknown, baseDir });
}

describe("Template check()", () => {
  it("accepts a name in any case and returns the inputs unchanged (no defaults)", () => {
    const raw = { name: " My-Team/Tools:V1 ", build: { fromTemplate: "base" } };
    const result = templateLifecycle.check(raw);
    expect(result.failures).toEqual([]);
    expect(result.inputs).toEqual({ name: " My-Team/Tools:V1 ", build: { fromTemplate: "base" } });
  });

  it("sees no change between a name as written and the same name in the service's case", async () => {
    const i = inputs({ name: "tools" });
    const result = await diffIn(dir, outputsFor(i), { ...i, name: " TOOLS " });
    expect(result.changes).toBe(false);
  });

  it("fails when several inputs are wrong, listing every failure with its path", () => {
    const result = templateLifecycle.check({
      name: "bad name!",
      tags: ["ok", "123e4567-e89b-12d3-a456-426614174000"],
      cpuCount: 0,
      memoryMB: 64,
      build: {
        fromTemplate: "base",
        fromImage: "ubuntu",
        steps: [{ run: "x", copy: { src: "a", dest: "/b" } }, {}],
      },
    });
    expect(result.inputs).toBeUndefined();
    const properties = result.failures.map((f) => f.property).sort();
    expect(properties).toEqual([
      "build",
      "build.steps.0",
      "build.steps.1",
      "cpuCount",
      "memoryMB",
      "name",
      "tags.1",
    ]);
    expect(result.failures.find((f) => f.property === "cpuCount")?.reason).toBe(
      "must be an integer >= 1, got 0",
    );
    expect(result.failures.find((f) => f.property === "tags.1")?.reason).toMatch(
      /must not be a UUID/,
    );
  });

  it("fails when a step mixes user with copy", () => {
    const result = templateLifecycle.check({
      name: "t",
      build: { fromTemplate: "base", steps: [{ user: "root", workdir: "/x" }] },
    });
    expect(result.failures).toEqual([
      { property: "build.steps.0", reason: expect.stringMatching(/user goes with run or alone/) },
    ]);
  });

  it("tolerates unknown values during preview", () => {
    const result = templateLifecycle.check(
      {
        name: "t",
        build: { fromTemplate: UNKNOWN, steps: [{ copy: { src: "files", dest: UNKNOWN } }] },
      },
      { isUnknown },
    );
    expect(result.failures).toEqual([]);
  });

  it("still reports a known bad value next to unknown ones", () => {
    const result = templateLifecycle.check(
      { name: "t", cpuCount: 0, build: UNKNOWN },
      { isUnknown },
    );
    expect(result.failures.map((f) => f.property)).toEqual(["cpuCount"]);
  });
});

describe("template names", () => {
  it.each([["base"], ["team/alias"], ["team/alias:v1.2"], ["a-b_c"]])("accepts %s", (name) => {
    expect(templateNameProblem(name)).toBeUndefined();
  });
  it.each([
    ["a/b/c"],
    ["a:b:c"],
    ["a b"],
    ["a:"],
    [""],
    ["x:123e4567-e89b-12d3-a456-426614174000"],
  ])("fails when the name is %j", (name) => {
    expect(templateNameProblem(name)).toBeDefined();
  });
  it("derives the tags from the name and the tags input", () => {
    expect(desiredTags("t", undefined)).toEqual(["default"]);
    expect(desiredTags("t:v2", ["latest"])).toEqual(["latest", "v2"]);
  });
});

describe("Template diff()", () => {
  it("reports no change for the same inputs and files", async () => {
    const i = inputs();
    expect(await diffIn(dir, outputsFor(i), i)).toEqual({
      changes: false,
      replaces: [],
      updates: [],
      paths: [],
    });
  });

  it("replaces when the name changes", async () => {
    const i = inputs();
    const result = await diffIn(dir, outputsFor(i), { ...i, name: "other" });
    expect(result.changes).toBe(true);
    expect(result.replaces).toEqual(["name"]);
  });

  it("updates only the tags when only the tags change", async () => {
    const i = inputs();
    const result = await diffIn(dir, outputsFor(i), { ...i, tags: ["v2"] });
    expect(result).toEqual({ changes: true, replaces: [], updates: ["tags"], paths: ["tags"] });
  });

  it("names a changed step by its index and field, and sees nothing in a run list written as its line", async () => {
    const i = inputs();
    const steps = [...i.build.steps!];
    steps[1] = { ...steps[1], run: ["apt-get update", "apt-get install -y jq curl"] };
    steps[2] = { env: { A: "1", B: "three" } };
    const result = await diffIn(dir, outputsFor(i), { ...i, build: { ...i.build, steps } });
    expect(result).toMatchObject({ updates: ["build"] });
    expect(result.paths).toEqual(["build.steps.1.run", "build.steps.2.env.B"]);
    steps[1] = { ...steps[1], run: "apt-get update && apt-get install -y jq" };
    steps[2] = i.build.steps![2]!;
    expect(await diffIn(dir, outputsFor(i), { ...i, build: { ...i.build, steps } })).toMatchObject({
      changes: false,
      paths: [],
    });
  });

  it("rebuilds when a step or the resources change", async () => {
    const i = inputs();
    expect((await diffIn(dir, outputsFor(i), { ...i, memoryMB: 1024 })).updates).toEqual([
      "memoryMB",
    ]);
    const steps = [...(i.build.steps ?? []), { run: "true" }];
    expect(
      (await diffIn(dir, outputsFor(i), { ...i, build: { ...i.build, steps } })).updates,
    ).toEqual(["build"]);
  });

  it("rebuilds when the content of a COPY source changes", async () => {
    const i = inputs();
    const olds = outputsFor(i);
    writeFileSync(path.join(dir, "files", "sub", "b.sh"), "echo changed\n");
    expect(await diffIn(dir, olds, i)).toEqual({
      changes: true,
      replaces: [],
      updates: ["build"],
      paths: ["filesHashes.0"],
    });
  });

  it("rebuilds when a COPY source disappeared (the build then says why)", async () => {
    const i = inputs();
    const olds = outputsFor(i);
    rmSync(path.join(dir, "files"), { recursive: true });
    expect((await diffIn(dir, olds, i)).updates).toEqual(["build"]);
  });

  it("puts back tags changed out of band", async () => {
    const i = inputs({ tags: ["v1"] });
    const olds = { ...outputsFor(i), currentTags: ["default", "v1", "hotfix"] };
    expect((await diffIn(dir, olds, i)).updates).toEqual(["tags"]);
  });

  it("reports unknown inputs as changes without reading files", async () => {
    const i = inputs();
    const result = await diffIn(dir, outputsFor(i), {
      ...i,
      build: UNKNOWN as unknown as TemplateInputs["build"],
    });
    expect(result.updates).toEqual(["build"]);
  });
});

describe("tagChanges()", () => {
  it("adds missing tags and never removes default", () => {
    expect(tagChanges(["v2"], ["default", "v1"])).toEqual({ add: ["v2"], remove: ["v1"] });
  });
});

describe("build request", () => {
  it("matches the official SDK's steps and files hashes byte for byte", async () => {
    const i = inputs({
      build: { ...inputs().build, startCmd: "sleep infinity", readyCmd: "true" },
    });
    const ours = toWireBuild(i, resolveCopies(i, dir));
    // The SDK is ESM-only inside (chalk), which jest cannot load: run it in plain node.
    const script = `
      const { Template } = require("e2b");
      const t = Template({ fileContextPath: ${JSON.stringify(dir)} })
        .fromTemplate("base")
        .copy("files", "/app", { user: "root", mode: 0o755 })
        .runCmd(["apt-get update", "apt-get install -y jq"], { user: "root" })
        .setEnvs({ A: "1", B: "two" })
        .setWorkdir("/app")
        .setUser("user")
        .setStartCmd("sleep infinity", "true");
      Template.toJSON(t).then((json) => process.stdout.write(json));`;
    const sdk = execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(ours).toEqual(JSON.parse(sdk));
  });

  it("turns a Dockerfile into the SDK's fromDockerfile body, globs and .dockerignore hashed as the SDK hashes them", async () => {
    // GIVEN a build context with a .dockerignore, and a Dockerfile using every instruction the SDK maps
    const ctx = path.join(dir, "ctx");
    mkdirSync(path.join(ctx, "src", "lib"), { recursive: true });
    writeFileSync(path.join(ctx, "src", "main.py"), "print('hi')\n");
    writeFileSync(path.join(ctx, "src", "util.py"), "x = 1\n");
    writeFileSync(path.join(ctx, "src", "notes.txt"), "kept\n");
    writeFileSync(path.join(ctx, "src", "lib", "deep.py"), "y = 2\n");
    writeFileSync(path.join(ctx, "src", "secret.env"), "ignored\n");
    mkdirSync(path.join(ctx, "src", "__pycache__"));
    writeFileSync(path.join(ctx, "src", "__pycache__", "main.pyc"), "ignored\n");
    writeFileSync(path.join(ctx, "requirements.txt"), "requests\n");
    // The SDK reads it as glob ignore patterns (not Docker's rules): a directory's
    // content needs `/**`, and a pattern is relative to the context.
    writeFileSync(
      path.join(ctx, ".dockerignore"),
      "# build junk\n**/__pycache__/**\n\nsrc/*.env\n",
    );
    const dockerfile = [
      "FROM python:3.12-slim",
      "ARG VERSION=1.0",
      "ARG EMPTY",
      "ENV APP_HOME=/app MODE=prod",
      "ENV LEGACY value",
      "LABEL maintainer=me",
      "RUN apt-get update && \\",
      "    apt-get install -y jq",
      "COPY --chown=user:user requirements.txt src/*.py /app/",
      "ADD src /app/src",
      "WORKDIR /app",
      "EXPOSE 8080",
      'CMD ["python", "main.py"]',
      "",
    ].join("\n");
    const i = templateArgsSchema.parse({
      name: "from-dockerfile",
      build: {
        dockerfile,
        context: "ctx",
        fromImageRegistry: { username: "me", password: "pw" },
        skipCache: true,
      },
    });
    // WHEN both build bodies are made
    const ours = toWireBuild(i, resolveCopies(i, dir));
    const script = `
      const { Template } = require("e2b");
      const t = Template({ fileContextPath: ${JSON.stringify(ctx)} }).fromDockerfile(${JSON.stringify(dockerfile)});
      t.registryConfig = { type: "registry", username: "me", password: "pw" };
      t.force = true; // what Template.build(t, { skipCache: true }) sets
      Template.toJSON(t).then((json) => process.stdout.write(json));`;
    const sdk = execFileSync(process.execPath, ["-e", script], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    // THEN they are the same, hashes included, and the ignored files are not in any hash
    expect(ours).toEqual(JSON.parse(sdk));
    expect(ours.steps?.filter((s) => s.type === "COPY").map((s) => s.args?.[0])).toEqual([
      "requirements.txt",
      "src/*.py",
      "src",
    ]);
    const before = ours.steps?.map((s) => s.filesHash);
    writeFileSync(path.join(ctx, "src", "secret.env"), "changed but ignored\n");
    writeFileSync(path.join(ctx, "src", "__pycache__", "main.pyc"), "changed but ignored\n");
    expect(toWireBuild(i, resolveCopies(i, dir)).steps?.map((s) => s.filesHash)).toEqual(before);
  });

  it("sends several sources as one COPY each and a step's force, as the SDK's copy([...]) after skipCache()", async () => {
    const i = templateArgsSchema.parse({
      name: "t",
      build: {
        fromImage: "alpine:3",
        steps: [
          { run: "true" },
          { copy: { sources: ["files/a.txt", "files/sub/*.sh"], dest: "/app/" }, force: true },
        ],
      },
    });
    const ours = toWireBuild(i, resolveCopies(i, dir));
    const script = `
      const { Template } = require("e2b");
      const t = Template({ fileContextPath: ${JSON.stringify(dir)} })
        .fromImage("alpine:3")
        .runCmd("true")
        .skipCache()
        .copy(["files/a.txt", "files/sub/*.sh"], "/app/");
      Template.toJSON(t).then((json) => process.stdout.write(json));`;
    const sdk = execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(ours).toEqual(JSON.parse(sdk));
  });

  it("fails check for a multi-stage Dockerfile, as the SDK refuses it", () => {
    const result = templateLifecycle.check({
      name: "t",
      build: { dockerfile: "FROM a AS build\nRUN make\nFROM b\n" },
    });
    expect(result.failures).toEqual([
      {
        property: "build.dockerfile",
        reason: expect.stringMatching(/multi-stage Dockerfile \(2 FROM instructions\)/),
      },
    ]);
  });

  it("never shows the registry password in a check failure", () => {
    const result = templateLifecycle.check({
      name: "t",
      build: {
        fromTemplate: "base",
        fromImageRegistry: { username: "me", password: "pw-5f1e-never-shown" },
      },
    });
    expect(result.failures.map((f) => f.property)).toEqual(["build.fromImageRegistry"]);
    expect(JSON.stringify(result.failures)).not.toContain("pw-5f1e-never-shown");
  });

  it("archives a source outside the program directory from its parent", () => {
    const outside = path.join(dir, "files", "sub");
    expect(resolveCopySource(outside, path.join(dir, "program"))).toEqual({
      contextDir: path.join(dir, "files"),
      src: "sub",
      ignore: [],
    });
    expect(resolveCopySource("files/sub", dir)).toEqual({
      contextDir: dir,
      src: "files/sub",
      ignore: [],
    });
  });

  it("spools a gzipped tar holding the source's files with relative paths", async () => {
    const archive = await spoolCopyArchive(resolveCopySource("files", dir));
    try {
      const listing = execFileSync("tar", ["-tzf", archive.path], { encoding: "utf8" })
        .trim()
        .split("\n")
        .sort();
      expect(listing).toEqual([
        "files/",
        "files/.hidden",
        "files/a.txt",
        "files/link",
        "files/sub/",
        "files/sub/b.sh",
      ]);
    } finally {
      await archive.cleanup();
    }
  });
});
