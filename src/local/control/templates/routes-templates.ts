/**
 * Template routes: create (`POST /v3/templates`), list, get, update, delete,
 * and alias look-up.
 *
 * @module
 */
import { ENVD_VERSION } from "../../../wire/envd";
import { serviceError, parseWith, type ControlRequest, type Route } from "../http";
import type { TemplateCatalog } from "./catalog";
import { DEFAULT_TAG } from "../../../wire/template-names";
import { BASE_TEMPLATE_ID, DEFAULT_CPU_COUNT, DEFAULT_MEMORY_MB } from "./constants";
import type { TemplateRouteDeps } from "./route-deps";
import { newTemplateRecord, type BuildRecord, type TemplateRecord } from "./model";
import { newBuildID, newTemplateID } from "../../../wire/ids";
import { requireTag, requireTemplateName } from "./names";
import { emptyResponse, paginate } from "./responses";
import { internalsOf } from "./registry";
import { BuildRequestV3, PageQuery, queryObject, TemplateUpdate } from "./schemas";
import { templateView, templateWithBuildsView } from "./views";

/** Finds a template by id, name or snapshot id, or answers 404. */
export function requireTemplate(catalog: TemplateCatalog, idOrName: string): TemplateRecord {
  const found = catalog.lookup(idOrName);
  if (!found) throw serviceError("not_found", `template '${idOrName}' not found`);
  return found.template;
}

/** The template routes; `deleteTags` serves `DELETE /templates/tags` if a router matches the id route first. */
export function templateCrudRoutes(deps: TemplateRouteDeps, deleteTags: Route["handler"]): Route[] {
  const { catalog, builds } = internalsOf(deps.registry);

  const create = async (req: ControlRequest) => {
    const body = parseWith(BuildRequestV3, (await req.json()) ?? {}, "body");
    const raw = body.name ?? body.alias;
    if (raw === undefined)
      throw serviceError(
        "invalid_argument",
        'body.name: Name is required, got nothing: send {"name": "my-template"}',
      );
    const parsed = requireTemplateName(raw, body.name !== undefined ? "body.name" : "body.alias");
    if (parsed.name === BASE_TEMPLATE_ID) {
      throw serviceError(
        "invalid_argument",
        "body.name: the built-in template 'base' cannot be rebuilt: choose another name",
      );
    }
    const tags = new Set<string>();
    if (parsed.tag) tags.add(parsed.tag);
    for (const [i, tag] of (body.tags ?? []).entries()) tags.add(requireTag(tag, `body.tags.${i}`));
    if (tags.size === 0) tags.add(DEFAULT_TAG);
    const now = new Date().toISOString();
    let t = catalog.byName(parsed.name);
    if (!t) {
      t = newTemplateRecord(
        { templateID: newTemplateID(), name: parsed.name, kind: "template", public: false },
        now,
      );
      catalog.add(t);
    }
    const build: BuildRecord = {
      buildID: newBuildID(),
      status: "waiting",
      createdAt: now,
      updatedAt: now,
      cpuCount: body.cpuCount ?? DEFAULT_CPU_COUNT,
      memoryMB: body.memoryMB ?? DEFAULT_MEMORY_MB,
      envdVersion: ENVD_VERSION,
      // Kept to be reported back (the schema stays lenient: the SDK may send anything here).
      ...(Number.isSafeInteger(body.minFreeDiskMb) && (body.minFreeDiskMb as number) >= 0
        ? { minFreeDiskMb: body.minFreeDiskMb as number }
        : {}),
    };
    t.builds.push(build);
    // a tag only ever resolves to a ready build, so assigning it now is safe
    catalog.assignTags(t, build.buildID, [...tags]);
    await catalog.save();
    return {
      status: 202,
      body: {
        templateID: t.templateID,
        buildID: build.buildID,
        public: t.public,
        names: [parsed.name],
        tags: [...tags],
        aliases: [parsed.alias],
      },
    };
  };

  const list = (kind: "v1" | "v2") => async (req: ControlRequest) => {
    const all = catalog.list("template").map((t) => templateView(catalog, t));
    if (kind === "v1") return { status: 200, body: all };
    const q = parseWith(PageQuery, queryObject(req.query), "query");
    const { page, headers } = paginate(all, q.limit, q.nextToken);
    return { status: 200, body: page, headers };
  };

  const get = async (req: ControlRequest) => {
    const t = requireTemplate(catalog, req.params.templateID);
    const q = parseWith(PageQuery, queryObject(req.query), "query");
    const { page, headers } = paginate([...t.builds].reverse(), q.limit, q.nextToken);
    return { status: 200, body: templateWithBuildsView(t, page), headers };
  };

  const remove = async (req: ControlRequest) => {
    const id = req.params.templateID;
    if (id === "tags") return deleteTags(req);
    const t = requireTemplate(catalog, id);
    if (t.templateID === BASE_TEMPLATE_ID)
      throw serviceError("invalid_argument", "the built-in template 'base' cannot be deleted");
    if (deps.sandboxes.isTemplateInUse(t.templateID)) {
      throw serviceError(
        "invalid_argument",
        `template '${id}' is used by running or paused sandboxes: kill them before deleting it`,
      );
    }
    // Deleting a template cancels its builds in progress (a cancelled create cleans up this way).
    await Promise.all(
      t.builds
        .filter((b) => b.status === "building")
        .map((b) => builds.cancel(b.buildID, undefined, { waitForCleanUp: true })),
    );
    await catalog.remove(t);
    return { status: 204 };
  };

  const update = (kind: "v1" | "v2") => async (req: ControlRequest) => {
    const t = requireTemplate(catalog, req.params.templateID);
    const body = parseWith(TemplateUpdate, (await req.json()) ?? {}, "body");
    if (body.public !== undefined && body.public !== null) {
      t.public = body.public;
      t.updatedAt = new Date().toISOString();
      await catalog.save();
    }
    return kind === "v1"
      ? emptyResponse(200)
      : { status: 200, body: { names: t.name ? [t.name] : [] } };
  };

  const alias = async (req: ControlRequest) => {
    const raw = req.params.alias;
    const parsed = requireTemplateName(raw, "alias");
    const t = catalog.byName(parsed.name) ?? catalog.get(parsed.name);
    if (!t) throw serviceError("not_found", `template '${parsed.name}' not found`);
    if (parsed.tag !== undefined && !t.tags[parsed.tag]) {
      throw serviceError(
        "not_found",
        `tag '${parsed.tag}' does not exist for template '${parsed.name}'`,
      );
    }
    return { status: 200, body: { templateID: t.templateID, public: t.public } };
  };

  return [
    { method: "POST", pattern: "/v3/templates", handler: create },
    { method: "GET", pattern: "/templates", handler: list("v1") },
    { method: "GET", pattern: "/v2/templates", handler: list("v2") },
    { method: "GET", pattern: "/templates/aliases/:alias", handler: alias },
    { method: "GET", pattern: "/templates/:templateID", handler: get },
    { method: "DELETE", pattern: "/templates/:templateID", handler: remove },
    { method: "PATCH", pattern: "/templates/:templateID", handler: update("v1") },
    { method: "PATCH", pattern: "/v2/templates/:templateID", handler: update("v2") },
  ];
}
