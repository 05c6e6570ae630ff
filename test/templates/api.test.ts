import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { gzipSync } from "node:zlib";
import { call, waitForBuild } from "./util";
import { useService, type TestService } from "../support/service";

jest.setTimeout(180_000);

let svc: TestService;
useService((s) => (svc = s));

/** Requests a build and runs it with `steps` from `base`; resolves with the ids once it ended. */
async function buildTemplate(
  name: string,
  steps: unknown[] = [],
  extra: Record<string, unknown> = {},
) {
  const created = await call(svc, "POST", "/v3/templates", { name, ...extra });
  expect(created.status).toBe(202);
  const { templateID, buildID } = created.body;
  const started = await call(svc, "POST", `/v2/templates/${templateID}/builds/${buildID}`, {
    fromTemplate: "base",
    steps,
  });
  expect(started.status).toBe(202);
  const { status } = await waitForBuild(svc, templateID, buildID);
  return { templateID, buildID, status };
}

describe("POST /v3/templates", () => {
  it("answers 202 with a new template id, a UUID build id and the normalised name and tag", async () => {
    const res = await call(svc, "POST", "/v3/templates", {
      name: "  My-App:V1 ",
      cpuCount: 1,
      memoryMB: 256,
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      templateID: expect.stringMatching(/^[a-z0-9]{20}$/),
      buildID: expect.stringMatching(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      ),
      public: false,
      names: ["my-app"],
      tags: ["v1"],
      aliases: ["my-app"],
    });
    const status = await call(
      svc,
      "GET",
      `/templates/${res.body.templateID}/builds/${res.body.buildID}/status`,
    );
    expect(status.body).toEqual({
      templateID: res.body.templateID,
      buildID: res.body.buildID,
      status: "waiting",
      logs: [],
      logEntries: [],
    });
  });

  it("reuses the template id of an existing name with a new build, tagged default when no tag is given", async () => {
    const first = await call(svc, "POST", "/v3/templates", { name: "team/reused" });
    const second = await call(svc, "POST", "/v3/templates", {
      name: "team/reused",
      tags: ["x", "y"],
    });
    expect(first.body).toMatchObject({
      names: ["team/reused"],
      tags: ["default"],
      aliases: ["reused"],
    });
    expect(second.body.templateID).toBe(first.body.templateID);
    expect(second.body.buildID).not.toBe(first.body.buildID);
    expect(second.body.tags).toEqual(["x", "y"]);
  });

  it.each([
    [{}, "body.name: Name is required"],
    [{ name: "bad name" }, "body.name: alias must match"],
    [{ name: "ns!/x" }, "body.name: namespace must match"],
    [{ name: "ok:bad tag" }, "body.name: tag must match"],
    [{ name: "ok:123e4567-e89b-12d3-a456-426614174000" }, "body.name: tag must not be a UUID"],
    [{ name: "ok", tags: ["fine", "no/slash"] }, "body.tags.1: tag must match"],
    [{ name: "ok", cpuCount: 0 }, "body.cpuCount"],
    [{ name: "ok", memoryMB: 64 }, "body.memoryMB"],
    [{ name: "base" }, "body.name: the built-in template 'base' cannot be rebuilt"],
  ])("fails when the body is %j with 400 naming the field", async (body, message) => {
    const res = await call(svc, "POST", "/v3/templates", body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, message: expect.stringContaining(message) });
  });

  it("accepts the deprecated alias when no name is given", async () => {
    const res = await call(svc, "POST", "/v3/templates", { alias: "legacy-alias" });
    expect(res).toMatchObject({ status: 202, body: { names: ["legacy-alias"] } });
  });

  it("fails when the API key is missing with 401", async () => {
    const res = await call(svc, "POST", "/v3/templates", { name: "nokey" }, { apiKey: null });
    expect(res.status).toBe(401);
  });
});

describe("template files", () => {
  it("stores an upload so the hash is present afterwards (gzip and plain tar)", async () => {
    const { body } = await call(svc, "POST", "/v3/templates", { name: "files-app" });
    for (const [label, payload] of [
      ["gz", gzipSync(Buffer.alloc(1024, 1))],
      ["plain", Buffer.alloc(1024, 2)],
    ] as const) {
      const hash = createHash("sha256").update(label).digest("hex");
      const before = await call(svc, "GET", `/templates/${body.templateID}/files/${hash}`);
      expect(before.status).toBe(201);
      expect(before.body).toEqual({
        present: false,
        url: expect.stringContaining(`/${body.templateID}/${hash}/`),
      });
      const put = await call(svc, "PUT", before.body.url, undefined, {
        apiKey: null,
        raw: payload,
      });
      expect(put.status).toBe(200);
      const after = await call(svc, "GET", `/templates/${body.templateID}/files/${hash}`);
      expect(after).toMatchObject({ status: 201, body: { present: true } });
      expect(after.body.url).toBeUndefined();
    }
  });

  it("fails when the upload link is reused or forged with 403", async () => {
    const { body } = await call(svc, "POST", "/v3/templates", { name: "files-forged" });
    const hash = createHash("sha256").update("forged").digest("hex");
    const link = await call(svc, "GET", `/templates/${body.templateID}/files/${hash}`);
    const forged = link.body.url.replace(/\/[0-9a-f]+$/, "/00");
    expect((await call(svc, "PUT", forged, undefined, { apiKey: null, raw: "x" })).status).toBe(
      403,
    );
    expect(
      (await call(svc, "PUT", link.body.url, undefined, { apiKey: null, raw: "x" })).status,
    ).toBe(200);
    expect(
      (await call(svc, "PUT", link.body.url, undefined, { apiKey: null, raw: "x" })).status,
    ).toBe(403);
  });

  it("fails when the hash is not 64 hex digits with 400 Invalid files hash", async () => {
    const res = await call(svc, "GET", "/templates/base/files/abc");
    expect(res).toMatchObject({ status: 400, body: { code: 400, message: "Invalid files hash" } });
  });
});

describe("builds", () => {
  it("fails when the build is started twice with 400 build is not in waiting state", async () => {
    const built = await buildTemplate("twice-app");
    expect(built.status.status).toBe("ready");
    const again = await call(
      svc,
      "POST",
      `/v2/templates/${built.templateID}/builds/${built.buildID}`,
      { steps: [] },
    );
    expect(again).toMatchObject({
      status: 400,
      body: { message: "build is not in waiting state" },
    });
  });

  it("ignores unknown fields inside steps and fails a COPY whose files were never uploaded", async () => {
    const hash = createHash("sha256").update("never-uploaded").digest("hex");
    const built = await buildTemplate("copy-missing", [
      {
        type: "RUN",
        args: ["true"],
        force: false,
        forceUpload: true,
        resolveSymlinks: false,
        gzip: true,
      },
      { type: "COPY", args: ["x", "/x", "", ""], filesHash: hash },
    ]);
    expect(built.status).toMatchObject({
      status: "error",
      reason: { step: "2", message: expect.stringContaining("never uploaded") },
    });
  });
  it("cancels a build in progress when its template is deleted, leaving nothing", async () => {
    const created = await call(svc, "POST", "/v3/templates", { name: "deleted-while-building" });
    const { templateID, buildID } = created.body;
    const started = await call(svc, "POST", `/v2/templates/${templateID}/builds/${buildID}`, {
      fromTemplate: "base",
      steps: [{ type: "RUN", args: ["sleep 60"] }],
    });
    expect(started.status).toBe(202);
    const removed = await call(svc, "DELETE", `/templates/${templateID}`);
    expect(removed.status).toBe(204);
    expect((await call(svc, "GET", `/templates/${templateID}`)).status).toBe(404);
    expect((await call(svc, "GET", "/templates/aliases/deleted-while-building")).status).toBe(404);
  });

  it("cancels one build in progress on DELETE of the build, keeping the template and its ready build", async () => {
    // GIVEN a template with a ready build and a second build in progress
    const first = await buildTemplate("cancelled-rebuild");
    const again = await call(svc, "POST", "/v3/templates", { name: "cancelled-rebuild" });
    const { templateID, buildID } = again.body;
    expect(templateID).toBe(first.templateID);
    await call(svc, "POST", `/v2/templates/${templateID}/builds/${buildID}`, {
      fromTemplate: "base",
      steps: [{ type: "RUN", args: ["sleep 60"] }],
    });
    // WHEN the client cancels the second build
    const cancelled = await call(svc, "DELETE", `/templates/${templateID}/builds/${buildID}`);
    // THEN it ended as cancelled, and the first build still answers for the name
    expect(cancelled.status).toBe(204);
    const status = await call(svc, "GET", `/templates/${templateID}/builds/${buildID}/status`);
    expect(status.body).toMatchObject({
      status: "error",
      reason: { message: "the build was cancelled: the client cancelled it" },
    });
    const tags = await call(svc, "GET", `/templates/${templateID}/tags`);
    expect(tags.body).toEqual([
      expect.objectContaining({ tag: "default", buildID: first.buildID }),
    ]);
    // AND cancelling a build that has ended changes nothing
    expect(
      (await call(svc, "DELETE", `/templates/${templateID}/builds/${first.buildID}`)).status,
    ).toBe(204);
    expect(
      (await call(svc, "GET", `/templates/${templateID}/builds/${first.buildID}/status`)).body,
    ).toMatchObject({ status: "ready" });
  });

  it("cancels a build still waiting for its files on DELETE of the build, so it can no longer start", async () => {
    // GIVEN a new build whose COPY files are still being uploaded (never started)
    const created = await call(svc, "POST", "/v3/templates", { name: "cancelled-mid-upload" });
    const { templateID, buildID } = created.body;
    // WHEN the client cancels it
    const cancelled = await call(svc, "DELETE", `/templates/${templateID}/builds/${buildID}`);
    // THEN it ended as cancelled rather than waiting forever, and a late start is refused
    expect(cancelled.status).toBe(204);
    const status = await call(svc, "GET", `/templates/${templateID}/builds/${buildID}/status`);
    expect(status.body).toMatchObject({
      status: "error",
      reason: { message: "the build was cancelled: the client cancelled it" },
    });
    const late = await call(svc, "POST", `/v2/templates/${templateID}/builds/${buildID}`, {
      fromTemplate: "base",
      steps: [],
    });
    expect(late.status).toBe(400);
  });
});

describe("templates, tags and aliases", () => {
  it("lists, gets, tags, resolves aliases and deletes a built template", async () => {
    const built = await buildTemplate("tagged-app", [{ type: "RUN", args: ["echo hi"] }]);
    expect(built.status.status).toBe("ready");

    const list = await call(svc, "GET", "/templates");
    const listed = list.body.find((x: { templateID: string }) => x.templateID === built.templateID);
    expect(listed).toEqual({
      templateID: built.templateID,
      buildID: built.buildID,
      cpuCount: 2,
      memoryMB: 512,
      diskSizeMB: 0,
      public: false,
      aliases: ["tagged-app"],
      names: ["tagged-app"],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      createdBy: null,
      lastSpawnedAt: null,
      spawnCount: 0,
      buildCount: 1,
      envdVersion: expect.any(String),
      buildStatus: "ready",
    });
    const v2 = await call(svc, "GET", "/v2/templates?limit=1");
    expect(v2.body).toHaveLength(1);
    expect(v2.headers.get("x-next-token")).toBeTruthy();

    const got = await call(svc, "GET", `/templates/${built.templateID}`);
    expect(got.body).toMatchObject({
      templateID: built.templateID,
      builds: [{ buildID: built.buildID, status: "ready" }],
    });

    expect(
      await call(svc, "POST", "/templates/tags", {
        target: "tagged-app:default",
        tags: ["stable"],
      }),
    ).toMatchObject({
      status: 201,
      body: { tags: ["stable"], buildID: built.buildID },
    });
    const tags = await call(svc, "GET", `/templates/${built.templateID}/tags`);
    expect(tags.body.map((x: { tag: string }) => x.tag)).toEqual(["default", "stable"]);
    expect(await call(svc, "GET", "/templates/aliases/tagged-app%3Astable")).toMatchObject({
      status: 200,
      body: { templateID: built.templateID, public: false },
    });

    expect(
      (await call(svc, "DELETE", "/templates/tags", { name: "tagged-app", tags: ["stable"] }))
        .status,
    ).toBe(204);
    expect(await call(svc, "GET", "/templates/aliases/tagged-app%3Astable")).toMatchObject({
      status: 404,
      body: { message: "tag 'stable' does not exist for template 'tagged-app'" },
    });
    expect(
      await call(svc, "DELETE", "/templates/tags", { name: "tagged-app", tags: ["default"] }),
    ).toMatchObject({
      status: 400,
      body: { message: "Cannot delete the 'default' tag" },
    });

    expect(
      await call(svc, "PATCH", `/v2/templates/${built.templateID}`, { public: true }),
    ).toMatchObject({
      status: 200,
      body: { names: ["tagged-app"] },
    });
    expect((await call(svc, "GET", "/templates/aliases/tagged-app")).body.public).toBe(true);

    const layersBefore = fs.readdirSync(path.join(svc.dataDir, "layers"));
    expect((await call(svc, "DELETE", "/templates/tagged-app")).status).toBe(204);
    // the template's step layer stays while the step cache holds it (the cache is
    // shared across templates, as E2B's); base and other templates' layers stay too
    const cache = JSON.parse(
      fs.readFileSync(path.join(svc.dataDir, "templates", "step-cache.json"), "utf8"),
    ) as { entries: Record<string, { layers: string[] }> };
    const cached = Object.values(cache.entries).flatMap((e) => e.layers);
    const layersAfter = fs.readdirSync(path.join(svc.dataDir, "layers"));
    expect(layersBefore.filter((l) => !layersAfter.includes(l))).toEqual([]);
    expect(cached.length).toBeGreaterThan(0);
    for (const l of cached) expect(layersAfter).toContain(l);
    expect(await call(svc, "GET", "/templates/aliases/tagged-app")).toMatchObject({
      status: 404,
      body: { code: 404, message: "template 'tagged-app' not found" },
    });
    expect((await call(svc, "DELETE", `/templates/${built.templateID}`)).status).toBe(404);
  });

  it("fails when deleting the built-in base template with 400", async () => {
    expect((await call(svc, "DELETE", "/templates/base")).status).toBe(400);
  });

  it("fails when assigning tags to an unknown template with 404", async () => {
    const res = await call(svc, "POST", "/templates/tags", {
      target: "nope:default",
      tags: ["a"],
    });
    expect(res).toMatchObject({
      status: 404,
      body: { message: "Template 'nope' with tag 'default' not found" },
    });
  });
});

describe("restarts", () => {
  it("keeps templates, builds, logs and tags across a restart of the service", async () => {
    const built = await buildTemplate("durable-app", [
      { type: "RUN", args: ["echo persisted-line"] },
    ]);
    expect(built.status.status).toBe("ready");
    svc = await svc.restart();
    const { status, logs } = await waitForBuild(svc, built.templateID, built.buildID);
    expect(status.status).toBe("ready");
    expect(logs.map((e) => e.message)).toContain("persisted-line");
    expect((await call(svc, "GET", "/templates/aliases/durable-app")).status).toBe(200);
  });
});
