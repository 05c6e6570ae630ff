/**
 * Snapshot routes: `POST /sandboxes/{sandboxID}/snapshots` captures a
 * sandbox's filesystem as a new template (build), `GET /snapshots` lists them.
 * A snapshot is used as `templateID` and deleted with `DELETE /templates/{snapshotID}`.
 *
 * @module
 */
import { ENVD_VERSION } from "../../../wire/envd";
import { serviceError, parseWith, type ControlRequest, type Route } from "../http";
import type { TemplateCatalog } from "./catalog";
import { BASE_TEMPLATE_ID } from "./constants";
import type { TemplateRouteDeps } from "./route-deps";
import { newTemplateRecord, type BuildRecord, type TemplateRecord } from "./model";
import { newBuildID, newTemplateID } from "../../../wire/ids";
import { DEFAULT_TAG, parseTemplateName } from "../../../wire/template-names";
import { requireTemplateName } from "./names";
import { paginate } from "./responses";
import type { ResolvedTemplate } from "./lookup";
import { internalsOf } from "./registry";
import { PageQuery, queryObject, SnapshotRequest } from "./schemas";
import { snapshotId, snapshotView } from "./views";

/** Adds the captured build to the template named `name` (or a new unnamed one). */
function recordSnapshot(
  catalog: TemplateCatalog,
  sandboxID: string,
  name: string | undefined,
  src: ResolvedTemplate,
  layer: string,
): TemplateRecord {
  const now = new Date().toISOString();
  // looked up only now, after the capture, so two snapshots with one new name share a template
  let t = name ? catalog.byName(name) : undefined;
  if (!t) {
    t = newTemplateRecord(
      {
        templateID: newTemplateID(),
        ...(name ? { name } : {}),
        kind: "snapshot",
        sourceSandboxID: sandboxID,
        public: false,
      },
      now,
    );
    catalog.add(t);
  }
  t.sourceSandboxID = sandboxID;
  const build: BuildRecord = {
    buildID: newBuildID(),
    status: "ready",
    createdAt: now,
    updatedAt: now,
    finishedAt: now,
    cpuCount: src.cpuCount,
    memoryMB: src.memoryMB,
    envdVersion: ENVD_VERSION,
    output: {
      layers: [...src.layers, layer],
      envs: { ...src.envs },
      defaultUser: src.defaultUser,
      ...(src.defaultWorkdir ? { defaultWorkdir: src.defaultWorkdir } : {}),
      ...(src.startCmd ? { startCmd: src.startCmd } : {}),
      ...(src.readyCmd ? { readyCmd: src.readyCmd } : {}),
    },
  };
  t.builds.push(build);
  catalog.assignTags(t, build.buildID, [DEFAULT_TAG]);
  return t;
}

/**
 * Captures `sandboxID`'s filesystem (its processes frozen meanwhile) as a new
 * build of the snapshot template `name` (a new unnamed one when absent).
 */
export async function captureSnapshot(
  deps: TemplateRouteDeps,
  catalog: TemplateCatalog,
  sandboxID: string,
  name: string | undefined,
): Promise<TemplateRecord> {
  const captured = await deps.sandboxes.runWhileFrozen(sandboxID, async (templateID, buildID) => {
    const src =
      (buildID ? catalog.resolveBuild(templateID, buildID) : undefined) ??
      catalog.resolve(templateID);
    if (!src) {
      throw serviceError(
        "conflict",
        `sandbox ${sandboxID} was started from template '${templateID}', which has no ready build any more`,
      );
    }
    return { src, layer: await deps.runtime.captureLayer(sandboxID) };
  });
  const t = recordSnapshot(catalog, sandboxID, name, captured.src, captured.layer);
  await catalog.save();
  return t;
}

/** The snapshot routes. */
export function snapshotRoutes(deps: TemplateRouteDeps): Route[] {
  const { catalog } = internalsOf(deps.registry);

  const create = async (req: ControlRequest) => {
    const sandboxID = req.params.sandboxID;
    const raw = await req.json();
    if (raw === undefined)
      throw serviceError(
        "invalid_argument",
        'body: a JSON body is required, got nothing: send {} or {"name": "my-snapshot"}',
      );
    const body = parseWith(SnapshotRequest, raw, "body");
    const name = body.name === undefined ? undefined : requireTemplateName(body.name, "body.name");
    if (name?.tag !== undefined) {
      throw serviceError(
        "invalid_argument",
        `body.name: a snapshot name carries no tag (snapshots are tagged 'default'), got ${JSON.stringify(body.name)}`,
      );
    }
    if (name?.name === BASE_TEMPLATE_ID)
      throw serviceError(
        "invalid_argument",
        "body.name: 'base' is the built-in template: choose another name",
      );
    if (!deps.sandboxes.exists(sandboxID)) {
      throw serviceError(
        "not_found",
        `Sandbox "${sandboxID}" doesn't exist or you don't have access to it`,
      );
    }
    const t = await captureSnapshot(deps, catalog, sandboxID, name?.name);
    return { status: 201, body: snapshotView(t) };
  };

  const list = async (req: ControlRequest) => {
    const q = parseWith(PageQuery, queryObject(req.query), "query");
    const wanted = q.name === undefined ? undefined : parseTemplateName(q.name).name;
    const items = catalog
      .list("snapshot")
      .filter((t) => q.sandboxID === undefined || t.sourceSandboxID === q.sandboxID)
      .filter(
        (t) =>
          wanted === undefined ||
          t.name === wanted ||
          t.templateID === wanted ||
          snapshotId(t) === q.name,
      )
      .sort(
        (a, b) =>
          b.createdAt.localeCompare(a.createdAt) || a.templateID.localeCompare(b.templateID),
      )
      .map(snapshotView);
    const { page, headers } = paginate(items, q.limit, q.nextToken);
    return { status: 200, body: page, headers };
  };

  return [
    { method: "POST", pattern: "/sandboxes/:sandboxID/snapshots", handler: create },
    { method: "GET", pattern: "/snapshots", handler: list },
  ];
}
