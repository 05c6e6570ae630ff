/**
 * Looking a template up by name or ID, with the build its tag points to.
 *
 * @module
 */
import { SandboxIacError } from "../../../errors";
import type { ResourceContext } from "../../core/lifecycle";
import { currentTagsOf, templateControl } from "../../core/template-control";
import { DEFAULT_TAG, parseTemplateName } from "../../../wire/template-names";
import type { TemplateDataArgs, TemplateDataResult } from "./template.args";

function missing(what: string): SandboxIacError {
  return new SandboxIacError(
    "not_found",
    `template ${what} does not exist (or belongs to another team): check the name or ID`,
    { operation: "templates.get", resourceId: what },
  );
}

/** The `template` data source's query; `not_found` when there is no such template. */
export async function readTemplate(
  args: TemplateDataArgs,
  ctx: ResourceContext,
): Promise<TemplateDataResult> {
  const control = templateControl(ctx);
  const parsed = args.name !== undefined ? parseTemplateName(args.name) : undefined;
  const what = JSON.stringify(args.name ?? args.templateID);
  const templateID = parsed ? await control.lookupName(parsed.name) : args.templateID;
  if (templateID === undefined) throw missing(what);
  const state = await control.getTemplate(templateID);
  if (!state) throw missing(what);
  const tags = await control.listTags(templateID);
  const tag = parsed?.tag ?? DEFAULT_TAG;
  const tagged = tags.find((t) => t.tag === tag)?.buildID;
  if (parsed?.tag !== undefined && tagged === undefined) {
    throw new SandboxIacError(
      "not_found",
      `template ${what} has no tag ${JSON.stringify(parsed.tag)}: its tags are ${tags.map((t) => t.tag).join(", ") || "none"}`,
      { operation: "templates.get", resourceId: templateID },
    );
  }
  const newest = [...state.builds].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  const build =
    state.builds.find((b) => b.buildID === tagged) ??
    newest.find((b) => b.status === "ready") ??
    newest[0];
  if (!build) throw missing(what);
  return {
    templateID,
    names: state.names,
    public: state.public,
    buildID: build.buildID,
    buildStatus: build.status,
    envdVersion: build.envdVersion ?? "",
    cpuCount: build.cpuCount,
    memoryMB: build.memoryMB,
    tags: await currentTagsOf(control, templateID, build.buildID),
  };
}
