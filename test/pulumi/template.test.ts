import { readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import * as path from "node:path";
import { destroy, HarnessRunError, preview, refresh, up } from "../harness";
import {
  assertBuilt,
  ops,
  programDir,
  stackOptions,
  startTestService,
  type TestService,
} from "./support";

jest.setTimeout(600_000);

let svc: TestService;
let dir: string;

beforeAll(async () => {
  assertBuilt();
  svc = await startTestService();
  dir = programDir("template");
  mkdirSync(path.join(dir, "files"), { recursive: true });
  writeFileSync(path.join(dir, "files", "hello.txt"), "hello\n");
});

afterAll(async () => {
  await svc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function templateExists(name: string): Promise<boolean> {
  return (await svc.call("GET", `/templates/aliases/${encodeURIComponent(name)}`)).status === 200;
}

describe("Template through Pulumi", () => {
  it("creates, keeps, retags, rebuilds, replaces, refreshes and destroys a template", async () => {
    // GIVEN a program with one template
    const opts = (config: Record<string, unknown>) => stackOptions(svc, dir, config);
    const created = await up(dir, opts({ name: "scn-tools", tags: ["v1"] }));
    expect(ops(created)).toEqual(["create tpl"]);
    const templateID = created.outputs["templateID"] as string;
    expect(await templateExists("scn-tools")).toBe(true);
    expect(created.outputs["currentTags"]).toEqual(expect.arrayContaining(["v1"]));

    // WHEN nothing changed THEN nothing happens
    expect(ops(await up(dir, opts({ name: "scn-tools", tags: ["v1"] })))).toEqual(["same tpl"]);

    // WHEN only the tags change THEN the tags are updated in place, on the same build
    const retagged = await up(dir, opts({ name: "scn-tools", tags: ["v2"] }));
    expect(ops(retagged)).toEqual(["update tpl"]);
    expect(retagged.outputs["buildID"]).toBe(created.outputs["buildID"]);
    expect(retagged.outputs["currentTags"]).toEqual(expect.arrayContaining(["v2"]));
    expect(retagged.outputs["currentTags"]).not.toContain("v1");

    // WHEN a COPY source's content changes THEN the same template gets a new build
    writeFileSync(path.join(dir, "files", "hello.txt"), "hello again\n");
    const rebuilt = await up(dir, opts({ name: "scn-tools", tags: ["v2"] }));
    expect(ops(rebuilt)).toEqual(["update tpl"]);
    expect(rebuilt.outputs["templateID"]).toBe(templateID);
    expect(rebuilt.outputs["buildID"]).not.toBe(created.outputs["buildID"]);

    // WHEN the name changes THEN the template is replaced and the old one deleted
    const replaced = await up(dir, opts({ name: "scn-tools-b", tags: ["v2"] }));
    expect(ops(replaced)).toContain("replace tpl");
    expect(replaced.outputs["templateID"]).not.toBe(templateID);
    expect(await templateExists("scn-tools")).toBe(false);

    // WHEN the template is deleted out of band THEN refresh drops it and up recreates it
    const newID = replaced.outputs["templateID"] as string;
    expect((await svc.call("DELETE", `/templates/${newID}`)).status).toBe(204);
    expect(ops(await refresh(dir, opts({ name: "scn-tools-b", tags: ["v2"] })))).toEqual([
      "refresh-deleted tpl",
    ]);
    expect(ops(await up(dir, opts({ name: "scn-tools-b", tags: ["v2"] })))).toEqual(["create tpl"]);

    // WHEN destroyed THEN the service holds no template of ours
    const destroyed = await destroy(dir, opts({ name: "scn-tools-b", tags: ["v2"] }));
    expect(ops(destroyed)).toEqual(["delete tpl"]);
    expect(await templateExists("scn-tools-b")).toBe(false);
    expect(destroyed.state.resources).toEqual([]);
  });

  it("previews a change without any service call", async () => {
    const opts = (config: Record<string, unknown>) => stackOptions(svc, dir, config);
    await up(dir, opts({ name: "scn-preview" }));
    const before = svc.requests.length;
    const previewed = await preview(
      dir,
      opts({ name: "scn-preview", tags: ["next"], memoryMB: 1024 }),
    );
    expect(ops(previewed)).toEqual(["update tpl"]);
    expect(svc.requests.slice(before)).toEqual([]);
    await destroy(dir, opts({ name: "scn-preview" }));
  });

  it("fails when a build step fails, leaving no template behind", async () => {
    const opts = stackOptions(svc, dir, { name: "scn-broken", run: "echo about to fail; exit 3" });
    opts.stateFile = path.join(dir, "broken-state.json");
    const failure = await up(dir, opts).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(HarnessRunError);
    expect((failure as HarnessRunError).result.errors.join("\n")).toMatch(
      /build of template "scn-broken" failed/,
    );
    expect(await templateExists("scn-broken")).toBe(false);
  });

  it("never stores the API key in the state file", async () => {
    const opts = stackOptions(svc, dir, { name: "scn-secret" });
    opts.stateFile = path.join(dir, "secret-state.json");
    await up(dir, opts);
    expect(readFileSync(opts.stateFile, "utf8")).not.toContain(svc.apiKey);
    await destroy(dir, opts);
  });
});
