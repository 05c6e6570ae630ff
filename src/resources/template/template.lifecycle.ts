/**
 * The Template resource: a named template built from a base and steps.
 * check and diff are pure (diff hashes local COPY sources, no service call);
 * create and update run a build and wait for it; delete removes the template.
 *
 * @module
 */
import { SandboxIacError } from "../../errors";
import { checkWithSchema } from "../core/check";
import { diffByRules } from "../core/diff";
import type {
  CheckOptions,
  CheckResult,
  DiffResult,
  ResourceContext,
  ResourceLifecycle,
} from "../core/lifecycle";
import {
  templateArgsSchema,
  templateChangeRules,
  type TemplateInputs,
  type TemplateOutputs,
} from "./template.args";
import { buildAndWait, uploadMissingFiles } from "./template.build";
import { templateControl, type TemplateControl } from "./template.control";
import { desiredTags, parseTemplateName } from "./template.names";
import { resolveCopies, toWireBuild } from "./template.steps";
import { currentTagsOf, syncTags, tagsDiffer } from "./template.tags";

/** COPY sources are relative to the working directory: under Pulumi, the program directory. */
function contextDir(): string {
  return process.cwd();
}

/** The files hashes `inputs` would build with now, or undefined when a source cannot be read. */
function currentHashes(inputs: TemplateInputs): string[] | undefined {
  try {
    return resolveCopies(inputs, contextDir()).map((c) => c.hash);
  } catch {
    return undefined;
  }
}

function hasUnknown(value: unknown, isUnknown: ((v: unknown) => boolean) | undefined): boolean {
  if (!isUnknown) return false;
  if (isUnknown(value)) return true;
  if (Array.isArray(value)) return value.some((v) => hasUnknown(v, isUnknown));
  if (value !== null && typeof value === "object")
    return Object.values(value).some((v) => hasUnknown(v, isUnknown));
  return false;
}

function createBody(inputs: TemplateInputs): {
  name: string;
  tags?: string[];
  cpuCount?: number;
  memoryMB?: number;
} {
  const body: { name: string; tags?: string[]; cpuCount?: number; memoryMB?: number } = {
    name: inputs.name,
  };
  if (inputs.tags !== undefined) body.tags = inputs.tags;
  if (inputs.cpuCount !== undefined) body.cpuCount = inputs.cpuCount;
  if (inputs.memoryMB !== undefined) body.memoryMB = inputs.memoryMB;
  return body;
}

/** Runs one build of `inputs` (new template or new build of the same template) and returns its IDs. */
async function build(
  control: TemplateControl,
  inputs: TemplateInputs,
  ctx: ResourceContext,
  onCreated: (templateID: string) => void = () => undefined,
) {
  // Local files first: a missing COPY source fails before anything is created.
  const copies = resolveCopies(inputs, contextDir());
  const created = await control.createTemplate(createBody(inputs));
  onCreated(created.templateID);
  const ids = { templateID: created.templateID, buildID: created.buildID, name: inputs.name };
  ctx.log(`building template ${inputs.name} (${created.templateID}, build ${created.buildID})`);
  await uploadMissingFiles(control, created.templateID, copies, ctx);
  await buildAndWait(control, ids, toWireBuild(inputs, copies), ctx);
  return { created, hashes: copies.map((c) => c.hash) };
}

/** Reads what the service reports about build `buildID` and merges it into outputs. */
async function describe(
  control: TemplateControl,
  inputs: TemplateInputs,
  ids: { templateID: string; buildID: string },
  filesHashes: string[],
): Promise<TemplateOutputs | undefined> {
  const state = await control.getTemplate(ids.templateID);
  if (!state) return undefined;
  const buildInfo = state.builds.find((b) => b.buildID === ids.buildID);
  return {
    ...inputs,
    templateID: ids.templateID,
    buildID: ids.buildID,
    names: state.names,
    public: state.public,
    envdVersion: buildInfo?.envdVersion ?? "",
    buildStatus: buildInfo?.status ?? "unknown",
    filesHashes,
    currentTags: await currentTagsOf(control, ids.templateID, ids.buildID),
  };
}

function vanished(templateID: string): SandboxIacError {
  return new SandboxIacError(
    "not_found",
    "the template disappeared while it was being built: something deleted it out of band; run again to recreate it",
    { operation: "templates.get", resourceId: templateID },
  );
}

function inputsOf(outputs: TemplateOutputs): TemplateInputs {
  const { name, tags, cpuCount, memoryMB, build } = outputs;
  const inputs: TemplateInputs = { name, build };
  if (tags !== undefined) inputs.tags = tags;
  if (cpuCount !== undefined) inputs.cpuCount = cpuCount;
  if (memoryMB !== undefined) inputs.memoryMB = memoryMB;
  return inputs;
}

/** The Template lifecycle. */
export const templateLifecycle: ResourceLifecycle<TemplateInputs, TemplateOutputs> = {
  typeName: "Template",

  check(news: unknown, options?: CheckOptions): CheckResult<TemplateInputs> {
    return checkWithSchema(templateArgsSchema, news, options);
  },

  diff(olds: TemplateOutputs, news: TemplateInputs, options: CheckOptions = {}): DiffResult {
    const result = diffByRules(olds, news, templateChangeRules, options);
    if (result.replaces.length > 0 || hasUnknown(news, options.isUnknown)) return result;
    // The content of COPY sources is part of the build: a changed local file rebuilds.
    if (!result.updates.includes("build")) {
      const hashes = currentHashes(news);
      if (!hashes || hashes.join() !== (olds.filesHashes ?? []).join())
        result.updates.push("build");
    }
    // Tags changed behind our back (seen by refresh) are put back.
    if (
      !result.updates.includes("tags") &&
      tagsDiffer(desiredTags(news.name, news.tags), olds.currentTags ?? [])
    ) {
      result.updates.push("tags");
    }
    result.changes = result.updates.length > 0;
    return result;
  },

  async create(inputs, ctx) {
    const control = templateControl(ctx);
    const existed = await control.lookupName(parseTemplateName(inputs.name).base);
    let templateID: string | undefined;
    try {
      const { created, hashes } = await build(control, inputs, ctx, (tid) => (templateID = tid));
      const outputs = await describe(control, inputs, created, hashes);
      if (!outputs) throw vanished(created.templateID);
      const tags = await syncTags(
        control,
        { ...created, name: inputs.name },
        desiredTags(inputs.name, inputs.tags),
        ctx,
      );
      return { id: created.templateID, outputs: { ...outputs, currentTags: tags } };
    } catch (err) {
      // All or nothing: a template we created is removed again; one that existed before stays.
      if (templateID !== undefined && templateID !== existed) {
        await control.deleteTemplate(templateID).catch(() => undefined);
      }
      throw err;
    }
  },

  async read(id, olds, ctx) {
    const control = templateControl(ctx);
    const outputs = await describe(
      control,
      inputsOf(olds),
      { templateID: id, buildID: olds.buildID },
      olds.filesHashes ?? [],
    );
    return outputs ? { id, outputs } : undefined;
  },

  async update(id, olds, news, ctx) {
    const control = templateControl(ctx);
    const diff = await templateLifecycle.diff(olds, news);
    let ids = { templateID: id, buildID: olds.buildID };
    let hashes = olds.filesHashes ?? [];
    if (diff.updates.some((k) => k === "build" || k === "cpuCount" || k === "memoryMB")) {
      const built = await build(control, news, ctx);
      ids = { templateID: built.created.templateID, buildID: built.created.buildID };
      hashes = built.hashes;
    }
    await syncTags(control, { ...ids, name: news.name }, desiredTags(news.name, news.tags), ctx);
    const outputs = await describe(control, news, ids, hashes);
    if (!outputs) throw vanished(id);
    return outputs;
  },

  async delete(id, _olds, ctx) {
    await templateControl(ctx).deleteTemplate(id);
  },
};
