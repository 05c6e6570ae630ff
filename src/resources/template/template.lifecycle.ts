/**
 * The Template resource: a named template built from a base and steps.
 * check and diff are pure (diff hashes local COPY sources, no service call);
 * create and update run a build and wait for it; delete removes the template.
 * Inputs are normalised (lower-cased name and tags, no steps = `[]`) inside
 * diff, create and update; outputs keep the inputs as the user wrote them.
 *
 * @module
 */
import { SandboxIacError } from "../../errors";
import { checkWithSchema } from "../core/check";
import { versionedRef } from "../core/refs";
import { changedPaths, diffByRules } from "../core/diff";
import { stopOnService, uncancellable, wasStopped } from "../core/stop";
import type { ResourceContext, ResourceLifecycle } from "../core/lifecycle";
import {
  REBUILDING_INPUTS,
  normaliseTemplateInputs,
  templateArgsSchema,
  templateChangeRules,
  templateSensitiveInputs,
  type TemplateInputs,
  type TemplateOutputs,
} from "./template.args";
import { buildAndWait, uploadMissingFiles } from "./template.build";
import {
  currentTagsOf,
  templateControl,
  type TemplateControl,
  type TemplateState,
} from "../core/template-control";
import { DEFAULT_TAG, parseTemplateName } from "../../wire/template-names";
import { resolveCopies, resolvedBuild, toWireBuild } from "./template.steps";
import { desiredTags, syncTags, tagsDiffer } from "./template.tags";

/** The files hashes `inputs` (normalised) would build with now, or undefined when a source cannot be read. */
function currentHashes(inputs: TemplateInputs, baseDir: string): string[] | undefined {
  try {
    return resolveCopies(inputs, baseDir).map((c) => c.hash);
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

function createBody(inputs: TemplateInputs): Parameters<TemplateControl["createTemplate"]>[0] {
  const body: Parameters<TemplateControl["createTemplate"]>[0] = { name: inputs.name };
  if (inputs.tags !== undefined) body.tags = inputs.tags;
  if (inputs.cpuCount !== undefined) body.cpuCount = inputs.cpuCount;
  if (inputs.memoryMB !== undefined) body.memoryMB = inputs.memoryMB;
  if (inputs.minFreeDiskMb !== undefined) body.minFreeDiskMb = inputs.minFreeDiskMb;
  return body;
}

/** Runs one build of normalised `inputs` (new template or new build of the same template) and returns its IDs. */
async function build(
  control: TemplateControl,
  inputs: TemplateInputs,
  ctx: ResourceContext,
  onCreated: (templateID: string) => void = () => undefined,
) {
  // Local files first: a missing COPY source fails before anything is created.
  const copies = resolveCopies(inputs, ctx.baseDir);
  // Not under ctx.signal (core/stop.ts): a stop mid-request would leave a build
  // on the service whose ID we never learn; once it is known, the stop cancels it.
  const created = await templateControl(uncancellable(ctx)).createTemplate(createBody(inputs));
  onCreated(created.templateID);
  const ids = { templateID: created.templateID, buildID: created.buildID, name: inputs.name };
  ctx.log(`building template ${inputs.name} (${created.templateID}, build ${created.buildID})`);
  const { ignored } = resolvedBuild(inputs);
  if (ignored.length > 0)
    ctx.log(
      `the Dockerfile's ${[...new Set(ignored)].join(", ")} instructions are ignored, as by the SDK`,
    );
  try {
    await uploadMissingFiles(control, created.templateID, copies, ctx);
    await buildAndWait(control, ids, toWireBuild(inputs, copies), ctx);
  } catch (err) {
    // Stopped mid-upload or mid-build: the build is cancelled on the service
    // (core/stop.ts), so it never becomes the template's build behind the
    // state's back. E2B has no such call: the build may still finish there.
    if (wasStopped(ctx))
      await stopOnService(
        ctx,
        `cancel build ${ids.buildID} of template ${ids.name} on the service`,
        () => templateControl(uncancellable(ctx)).cancelBuild(ids.templateID, ids.buildID),
        "it may still finish on the service; the next plan compares",
      );
    throw err;
  }
  return { created, hashes: copies.map((c) => c.hash) };
}

/** Reads what the service reports about build `buildID` and merges it into outputs beside `inputs` (as written). */
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
    ref: versionedRef(ids.templateID, ids.buildID),
    names: state.names,
    public: state.public,
    envdVersion: buildInfo?.envdVersion ?? "",
    buildStatus: buildInfo?.status ?? "unknown",
    imageDigest: buildInfo?.imageDigest ?? "",
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
  const { name, tags, cpuCount, memoryMB, minFreeDiskMb, build } = outputs;
  const inputs: TemplateInputs = { name, build };
  if (tags !== undefined) inputs.tags = tags;
  if (cpuCount !== undefined) inputs.cpuCount = cpuCount;
  if (memoryMB !== undefined) inputs.memoryMB = memoryMB;
  if (minFreeDiskMb !== undefined) inputs.minFreeDiskMb = minFreeDiskMb;
  return inputs;
}

/** The build a template without state is taken to use: the newest ready one, else the newest. */
function buildInUse(state: TemplateState): TemplateState["builds"][number] | undefined {
  const newest = [...state.builds].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  return newest.find((b) => b.status === "ready") ?? newest[0];
}

/**
 * Import: the inputs the service can tell (name, tags, cpuCount, memoryMB,
 * and minFreeDiskMb where the service reports it, as the local one does) and
 * the outputs of the build in use. The build definition (base, registry,
 * Dockerfile, steps, start and ready commands) is not reported by the
 * control API, so `build` is left out: the next plan shows it as a change
 * and the next apply builds the template anew from the configuration.
 */
async function importTemplate(
  control: TemplateControl,
  templateID: string,
): Promise<TemplateOutputs | undefined> {
  const state = await control.getTemplate(templateID);
  if (!state) return undefined;
  const inUse = buildInUse(state);
  const firstName = state.names[0];
  if (!inUse || firstName === undefined) return undefined;
  const currentTags = await currentTagsOf(control, templateID, inUse.buildID);
  const inputs = {
    name: parseTemplateName(firstName).name,
    cpuCount: inUse.cpuCount,
    memoryMB: inUse.memoryMB,
  } as TemplateInputs;
  if (inUse.minFreeDiskMb !== undefined) inputs.minFreeDiskMb = inUse.minFreeDiskMb;
  const tags = currentTags.filter((t) => t !== DEFAULT_TAG);
  if (tags.length > 0) inputs.tags = tags;
  return describe(control, inputs, { templateID, buildID: inUse.buildID }, []);
}

/** The Template lifecycle. */
export const templateLifecycle: ResourceLifecycle<TemplateInputs, TemplateOutputs> = {
  typeName: "Template",

  check(news, options) {
    return checkWithSchema(templateArgsSchema, news, options, templateSensitiveInputs);
  },

  diff(olds, rawNews, options) {
    const news = normaliseTemplateInputs(rawNews);
    const normalOlds = normaliseTemplateInputs(olds);
    const result = diffByRules(normalOlds, news, templateChangeRules, options);
    // Where in each changed input: a changed step by its index and field (`build.steps.1.run`).
    result.paths = [...result.replaces, ...result.updates].flatMap((k) =>
      changedPaths(normalOlds[k as keyof TemplateInputs], news[k as keyof TemplateInputs], k),
    );
    if (result.replaces.length > 0 || hasUnknown(news, options.isUnknown)) return result;
    // The content of COPY sources is part of the build: a changed local file rebuilds.
    if (!result.updates.includes("build")) {
      const hashes = currentHashes(news, options.baseDir);
      const before = olds.filesHashes ?? [];
      if (!hashes || hashes.join() !== before.join()) {
        result.updates.push("build");
        // Which COPY's content changed (its files hash); unreadable sources: the build as a whole.
        const changed = hashes
          ? Array.from({ length: Math.max(hashes.length, before.length) }, (_, i) => i)
              .filter((i) => hashes[i] !== before[i])
              .map((i) => `filesHashes.${i}`)
          : ["build"];
        result.paths = [...(result.paths ?? []), ...changed];
      }
    }
    // Tags changed behind our back (seen by refresh) are put back.
    if (
      !result.updates.includes("tags") &&
      tagsDiffer(desiredTags(news.name, news.tags), olds.currentTags ?? [])
    ) {
      result.updates.push("tags");
      result.paths = [...(result.paths ?? []), "currentTags"];
    }
    result.changes = result.updates.length > 0;
    return result;
  },

  async planOutputs(inputs, options) {
    // The same hashes create and update compute: a missing source fails here, at plan time.
    const copies = resolveCopies(normaliseTemplateInputs(inputs), options.baseDir);
    return { filesHashes: copies.map((c) => c.hash) };
  },

  async create(rawInputs, ctx) {
    const inputs = normaliseTemplateInputs(rawInputs);
    const control = templateControl(ctx);
    const existed = await control.lookupName(parseTemplateName(inputs.name).name);
    let templateID: string | undefined;
    try {
      const { created, hashes } = await build(control, inputs, ctx, (tid) => (templateID = tid));
      const outputs = await describe(control, rawInputs, created, hashes);
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
        // Not under ctx.signal: a stopped create (core/stop.ts) must still clean up.
        await templateControl(uncancellable(ctx))
          .deleteTemplate(templateID)
          .catch(() => undefined);
      }
      throw err;
    }
  },

  async read(id, olds, ctx) {
    const control = templateControl(ctx);
    const outputs = olds
      ? await describe(
          control,
          inputsOf(olds),
          { templateID: id, buildID: olds.buildID },
          olds.filesHashes ?? [],
        )
      : await importTemplate(control, id);
    return outputs ? { id, outputs } : undefined;
  },

  async update(id, olds, rawNews, ctx) {
    const news = normaliseTemplateInputs(rawNews);
    const control = templateControl(ctx);
    const diff = await templateLifecycle.diff(olds, rawNews, { baseDir: ctx.baseDir });
    let ids = { templateID: id, buildID: olds.buildID };
    let hashes = olds.filesHashes ?? [];
    if (diff.updates.some((k) => (REBUILDING_INPUTS as readonly string[]).includes(k))) {
      const built = await build(control, news, ctx);
      ids = { templateID: built.created.templateID, buildID: built.created.buildID };
      hashes = built.hashes;
    }
    await syncTags(control, { ...ids, name: news.name }, desiredTags(news.name, news.tags), ctx);
    const outputs = await describe(control, rawNews, ids, hashes);
    if (!outputs) throw vanished(id);
    return outputs;
  },

  async delete(id, _olds, ctx) {
    await templateControl(ctx).deleteTemplate(id);
  },
};
