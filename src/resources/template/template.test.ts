import { rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import type { TemplateInputs, TemplateOutputs } from "./template.args";
import { templateLifecycle } from "./template.lifecycle";
import { makeProgramDir, templateInputs as inputs } from "../../../test/support/template-program";
import { templateNameProblem } from "../../wire/template-names";
import { resolveCopies } from "./template.steps";
import { desiredTags, tagChanges } from "./template.tags";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const isUnknown = (v: unknown) => v === UNKNOWN;

let dir: string;
beforeEach(() => (dir = makeProgramDir()));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

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
