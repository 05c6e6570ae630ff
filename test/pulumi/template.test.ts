import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import * as path from "node:path";
import { destroy, HarnessRunError, preview, refresh, up } from "../harness";
import { ops, pulumiStack, stackOptions } from "./support";
import { phases } from "../support/phases";

jest.setTimeout(600_000);

const stack = pulumiStack("template", {
  prepare: (root) => {
    mkdirSync(path.join(root, "files"), { recursive: true });
    writeFileSync(path.join(root, "files", "hello.txt"), "hello\n");
  },
});

async function templateExists(name: string): Promise<boolean> {
  return (
    (await stack.svc.call("GET", `/templates/aliases/${encodeURIComponent(name)}`)).status === 200
  );
}

describe("Template through Pulumi: one scenario, phase by phase", () => {
  const phase = phases();
  const opts = (config: Record<string, unknown>) => stackOptions(stack.svc, stack.dir, config);
  let templateID: string;
  let firstBuildID: unknown;
  let replacedID: string;

  phase("creates a template with its tags", async () => {
    const created = await up(stack.dir, opts({ name: "scn-tools", tags: ["v1"] }));
    expect(ops(created)).toEqual(["create tpl"]);
    templateID = created.outputs["templateID"] as string;
    firstBuildID = created.outputs["buildID"];
    expect(await templateExists("scn-tools")).toBe(true);
    expect(created.outputs["currentTags"]).toEqual(expect.arrayContaining(["v1"]));
  });

  phase("does nothing when nothing changed", async () => {
    expect(ops(await up(stack.dir, opts({ name: "scn-tools", tags: ["v1"] })))).toEqual([
      "same tpl",
    ]);
  });

  phase("updates only the tags in place, on the same build", async () => {
    const retagged = await up(stack.dir, opts({ name: "scn-tools", tags: ["v2"] }));
    expect(ops(retagged)).toEqual(["update tpl"]);
    expect(retagged.outputs["buildID"]).toBe(firstBuildID);
    expect(retagged.outputs["currentTags"]).toEqual(expect.arrayContaining(["v2"]));
    expect(retagged.outputs["currentTags"]).not.toContain("v1");
  });

  phase("rebuilds the same template when a COPY source's content changes", async () => {
    writeFileSync(path.join(stack.dir, "files", "hello.txt"), "hello again\n");
    const rebuilt = await up(stack.dir, opts({ name: "scn-tools", tags: ["v2"] }));
    expect(ops(rebuilt)).toEqual(["update tpl"]);
    expect(rebuilt.outputs["templateID"]).toBe(templateID);
    expect(rebuilt.outputs["buildID"]).not.toBe(firstBuildID);
  });

  phase("replaces the template when the name changes and deletes the old one", async () => {
    const replaced = await up(stack.dir, opts({ name: "scn-tools-b", tags: ["v2"] }));
    expect(ops(replaced)).toContain("replace tpl");
    expect(replaced.outputs["templateID"]).not.toBe(templateID);
    expect(await templateExists("scn-tools")).toBe(false);
    replacedID = replaced.outputs["templateID"] as string;
  });

  phase("drops a template deleted out of band on refresh, and up recreates it", async () => {
    expect((await stack.svc.call("DELETE", `/templates/${replacedID}`)).status).toBe(204);
    expect(ops(await refresh(stack.dir, opts({ name: "scn-tools-b", tags: ["v2"] })))).toEqual([
      "refresh-deleted tpl",
    ]);
    expect(ops(await up(stack.dir, opts({ name: "scn-tools-b", tags: ["v2"] })))).toEqual([
      "create tpl",
    ]);
  });

  phase("destroys it, leaving the service no template of ours", async () => {
    const destroyed = await destroy(stack.dir, opts({ name: "scn-tools-b", tags: ["v2"] }));
    expect(ops(destroyed)).toEqual(["delete tpl"]);
    expect(await templateExists("scn-tools-b")).toBe(false);
    expect(destroyed.state.resources).toEqual([]);
  });
});

describe("Template through Pulumi", () => {
  it("previews a change without any service call, naming the changed step", async () => {
    const opts = (config: Record<string, unknown>) => stackOptions(stack.svc, stack.dir, config);
    await up(stack.dir, opts({ name: "scn-preview" }));
    const before = stack.svc.requests.length;
    const previewed = await preview(
      stack.dir,
      opts({ name: "scn-preview", tags: ["next"], memoryMB: 1024, run: "test -d /opt/app" }),
    );
    expect(ops(previewed)).toEqual(["update tpl"]);
    expect(stack.svc.requests.slice(before)).toEqual([]);
    // The plugin cannot hand the engine a detailed diff: its output line says where the change is.
    expect(previewed.diagnostics.map((d) => d.message)).toContain(
      "Template scn-preview: plan: update in place (tags, memoryMB, build.steps[1].run)",
    );
    await destroy(stack.dir, opts({ name: "scn-preview" }));
  });

  it("fails when a build step fails, leaving no template behind", async () => {
    const opts = stackOptions(stack.svc, stack.dir, {
      name: "scn-broken",
      run: "echo about to fail; exit 3",
    });
    opts.stateFile = path.join(stack.dir, "broken-state.json");
    const failure = await up(stack.dir, opts).then(
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
    const opts = stackOptions(stack.svc, stack.dir, { name: "scn-secret" });
    opts.stateFile = path.join(stack.dir, "secret-state.json");
    await up(stack.dir, opts);
    expect(readFileSync(opts.stateFile, "utf8")).not.toContain(stack.svc.apiKey);
    await destroy(stack.dir, opts);
  });
});
