/**
 * Two resource bugs seen against the local service: a kept sandbox killed out
 * of band must not orphan the Provisioner's snapshot, and tags must be
 * addable to a build that has no tag left.
 */
import { resolveConfig } from "../../src/config";
import type { ResourceContext } from "../../src/resources/core/lifecycle";
import { provisionerLifecycle } from "../../src/resources/provisioner";
import { templateControl } from "../../src/resources/core/template-control";
import { syncTags } from "../../src/resources/template/template.tags";
import { call } from "./support";
import { useService, type TestService } from "../support/service";
import { eventually } from "../support/eventually";

let svc: TestService;
useService((s) => (svc = s));

function context(): ResourceContext {
  return {
    config: resolveConfig({
      apiUrl: svc.apiUrl,
      apiKey: svc.apiKey,
      sandboxUrl: svc.sandboxUrl,
      env: {},
    }),
    log: () => undefined,
    baseDir: process.cwd(),
  };
}

async function buildFromBase(name: string): Promise<{ templateID: string; buildID: string }> {
  const created = await call(svc, "POST", "/v3/templates", { name });
  const { templateID, buildID } = created.body as { templateID: string; buildID: string };
  const started = await call(svc, "POST", `/v2/templates/${templateID}/builds/${buildID}`, {
    fromTemplate: "base",
    steps: [],
  });
  expect(started.status).toBe(202);
  await eventually(
    async () => {
      const st = await call(svc, "GET", `/templates/${templateID}/builds/${buildID}/status`);
      const status = (st.body as { status: string }).status;
      if (status === "error") throw new Error(`build failed: ${JSON.stringify(st.body)}`);
      return status === "ready";
    },
    { timeoutMs: 120_000 },
  );
  return { templateID, buildID };
}

describe("resource bugs", () => {
  it("keeps a Provisioner whose kept sandbox was killed out of band while its snapshot exists, so delete removes the snapshot", async () => {
    const ctx = context();
    const checked = provisionerLifecycle.check({
      template: "base",
      keepSandbox: true,
      snapshot: { name: "kept-then-killed" },
      commands: [{ run: "echo hi > /home/user/x" }],
    });
    expect(checked.failures).toEqual([]);
    const created = await provisionerLifecycle.create(checked.inputs!, ctx);
    const kept = created.outputs.keptSandboxID!;
    expect(created.outputs.snapshotID).toBeDefined();

    expect((await call(svc, "DELETE", `/sandboxes/${kept}`)).status).toBe(204);
    const read = await provisionerLifecycle.read(created.id, created.outputs, ctx);
    expect(read).toBeDefined();
    expect(read!.outputs.keptSandboxID).toBeUndefined();
    expect(read!.outputs.snapshotID).toBe(created.outputs.snapshotID);

    // The next update provisions a kept sandbox again.
    const diff = await provisionerLifecycle.diff(read!.outputs, checked.inputs!, {
      baseDir: process.cwd(),
    });
    expect(diff.changes).toBe(true);
    expect(diff.updates).toContain("keepSandbox");

    await provisionerLifecycle.delete(created.id, read!.outputs, ctx);
    expect((await call(svc, "GET", "/templates/aliases/kept-then-killed")).status).toBe(404);
  });

  it("adds tags to a build that has no tag left", async () => {
    const first = await buildFromBase("tagless-build");
    // A second build takes the 'default' tag: the first has none left.
    await buildFromBase("tagless-build");
    const before = await call(svc, "GET", `/templates/${first.templateID}/tags`);
    expect(
      (before.body as { buildID: string }[]).filter((t) => t.buildID === first.buildID),
    ).toEqual([]);

    const tags = await syncTags(
      templateControl(context()),
      { ...first, name: "tagless-build" },
      ["v1"],
      context(),
    );
    expect(tags).toEqual(["v1"]);
    const sbx = await call(svc, "POST", "/sandboxes", {
      templateID: "tagless-build:v1",
      timeout: 30,
    });
    expect(sbx.status).toBe(201);
    await call(svc, "DELETE", `/sandboxes/${(sbx.body as { sandboxID: string }).sandboxID}`);
  });
});
