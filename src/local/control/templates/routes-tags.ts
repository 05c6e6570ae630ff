/**
 * Tag routes: assign (`POST /templates/tags`), remove (`DELETE
 * /templates/tags`, a DELETE with a JSON body) and list a template's tags.
 *
 * @module
 */
import { serviceError, parseWith, type ControlRequest, type Route } from "../http";
import { DEFAULT_TAG } from "../../../wire/template-names";
import type { TemplateRouteDeps } from "./route-deps";
import { isBuildID } from "../../../wire/ids";
import { requireTag, requireTemplateName } from "./names";
import { internalsOf } from "./registry";
import { requireTemplate } from "./routes-templates";
import { AssignTags, DeleteTags } from "./schemas";
import { tagsView } from "./views";

/** The tag routes, and the delete handler (also reachable through `DELETE /templates/:id`). */
export function tagRoutes(deps: TemplateRouteDeps): {
  routes: Route[];
  deleteTags: Route["handler"];
} {
  const { catalog } = internalsOf(deps.registry);

  const assign = async (req: ControlRequest) => {
    const body = parseWith(AssignTags, await req.json(), "body");
    // `name:<buildID>` names a build directly, even one without any tag left.
    const byBuild = /^(.+):([^:]+)$/.exec(body.target);
    const buildID = byBuild && isBuildID(byBuild[2]) ? byBuild[2] : undefined;
    const target = requireTemplateName(buildID ? byBuild![1] : body.target, "body.target");
    const tag = buildID ?? target.tag ?? DEFAULT_TAG;
    const tags = body.tags.map((t, i) => requireTag(t, `body.tags.${i}`));
    const t = catalog.byName(target.name) ?? catalog.get(target.name);
    const found = t && (buildID ? catalog.findBuild(t, buildID) : catalog.pickBuild(t, tag));
    const b = found?.status === "ready" ? found : undefined;
    if (!t || !b)
      throw serviceError("not_found", `Template '${target.name}' with tag '${tag}' not found`);
    catalog.assignTags(t, b.buildID, tags);
    await catalog.save();
    return { status: 201, body: { tags, buildID: b.buildID } };
  };

  const remove = async (req: ControlRequest) => {
    const body = parseWith(DeleteTags, await req.json(), "body");
    const name = requireTemplateName(body.name, "body.name");
    if (name.tag !== undefined) {
      throw serviceError(
        "invalid_argument",
        `body.name: must be a template name without a tag, got ${JSON.stringify(body.name)}: list the tags in body.tags`,
      );
    }
    const tags = body.tags.map((t, i) => requireTag(t, `body.tags.${i}`));
    if (tags.includes(DEFAULT_TAG))
      throw serviceError("invalid_argument", "Cannot delete the 'default' tag");
    const t = catalog.byName(name.name) ?? catalog.get(name.name);
    if (!t) throw serviceError("not_found", `template '${name.name}' not found`);
    const missing = tags.find((tag) => !t.tags[tag]);
    if (missing)
      throw serviceError(
        "not_found",
        `tag '${missing}' does not exist for template '${name.name}'`,
      );
    for (const tag of tags) delete t.tags[tag];
    t.updatedAt = new Date().toISOString();
    await catalog.save();
    return { status: 204 };
  };

  const list = async (req: ControlRequest) => {
    const t = requireTemplate(catalog, req.params.templateID);
    return { status: 200, body: tagsView(catalog, t) };
  };

  return {
    deleteTags: remove,
    routes: [
      { method: "POST", pattern: "/templates/tags", handler: assign },
      { method: "DELETE", pattern: "/templates/tags", handler: remove },
      { method: "GET", pattern: "/templates/:templateID/tags", handler: list },
    ],
  };
}
