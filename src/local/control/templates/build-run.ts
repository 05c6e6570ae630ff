/**
 * One template build's run, from its base to its recorded outcome: the base
 * (the parent build's layers, or an image pulled and unpacked), then the
 * steps in order, each step's result a layer of its own kept in the step
 * cache, so that an unchanged prefix of steps is reused (logged `CACHED Step
 * i/n: …`) and the first changed or forced step and every step after it run;
 * then the start and ready commands, whose effects are the build's top
 * layer. Its own file because it is what one build does once it holds a slot,
 * apart from how builds are started, bounded and cancelled (build-runner.ts).
 *
 * @module
 */
import { layerExists } from "../../runtime/layers";
import type { SandboxRuntime } from "../../runtime/types";
import type { TemplateCatalog } from "./catalog";
import type { TemplateFileStore } from "./file-store";
import { BUILD_STEP } from "./constants";
import type { BuildOutput, BuildRecord, LogLevel, TemplateRecord } from "./model";
import type { ResolvedTemplate } from "./lookup";
import { runStep, StepFailure, type BuildState, type TemplateStep } from "./build-steps";
import { SandboxIacError } from "../../../errors";
import type { ImageSource } from "./image-source";
import { BuildSandbox } from "./build-sandbox";
import { finalizeBuild } from "./build-finalize";
import { imageBase, type BuildBase } from "./build-image-base";
import { baseKey, stepKey, type StepState } from "./step-cache";

/** What a build was asked to do (from `TemplateBuildStartV2`). */
export interface BuildPlan {
  /** The parent build the steps run on (`fromTemplate`); exactly one of `from` and `image`. */
  from?: ResolvedTemplate | undefined;
  /** The container image the steps run on (`fromImage`). */
  image?: ImageSource | undefined;
  steps: TemplateStep[];
  /** The build's `force` (`Template.build(t, { skipCache: true })`): every step runs again. */
  force?: boolean | undefined;
  startCmd?: string | undefined;
  readyCmd?: string | undefined;
}

/** What {@link runBuild} works with: the build runner's stores, runtime and options. */
export interface BuildRunDeps {
  catalog: TemplateCatalog;
  files: TemplateFileStore;
  runtime: SandboxRuntime;
  log: (line: string) => void;
  dataDir: string;
  /** Registries (`host:port`) pulled over plain HTTP besides loopback ones. */
  insecureRegistries: readonly string[];
}

/**
 * Runs build `b` of `t` as `plan` says, and records its outcome: `ready` with
 * its output, or `error` with the failure (a cancel through `cancelled` is
 * reported as the cancel, whatever step it cut). Calls `ended` once the
 * outcome is recorded; then stops and destroys the build sandbox, flushes the
 * build's log and collects the layers nothing uses any more.
 */
export async function runBuild(
  deps: BuildRunDeps,
  t: TemplateRecord,
  b: BuildRecord,
  plan: BuildPlan,
  cancelled: AbortSignal,
  ended: () => void,
): Promise<void> {
  const logLine = (level: LogLevel, message: string, step?: string) =>
    deps.catalog.logs.append(b.buildID, level, message, step);
  // A cancel stops the build sandbox, so the step in progress fails; the failure is reported as the cancel.
  const box = new BuildSandbox(deps.runtime, deps.catalog, deps.dataDir, b, deps.log, cancelled);
  let step: string = BUILD_STEP.base;
  const checkCancelled = () => {
    if (cancelled.aborted) throw new StepFailure("the build was cancelled");
  };
  try {
    checkCancelled();
    const from: BuildBase =
      plan.from ??
      (await imageBase(
        {
          catalog: deps.catalog,
          runtime: deps.runtime,
          insecureRegistries: deps.insecureRegistries,
        },
        plan.image!,
        b,
        logLine,
        cancelled,
      ));
    let state: StepState = {
      layers: [...from.layers],
      envs: { ...from.envs },
      user: from.defaultUser,
      workdir: from.defaultWorkdir,
    };
    let key = baseKey(state);
    // E2B: an unchanged prefix is reused; from the first changed (or forced) step on, every step runs.
    let reuse = !plan.force;
    let reused = 0;
    for (const [i, s] of plan.steps.entries()) {
      checkCancelled();
      // the SDK maps step "n" to its n-th stack trace; index 0 is the from* call
      step = String(i + 1);
      key = stepKey(key, s);
      const what = `Step ${i + 1}/${plan.steps.length}: ${describeStep(s)}`;
      if (s.force) reuse = false;
      const hit = reuse
        ? await deps.catalog.cache.find(key, (l) => layerExists(deps.dataDir, l))
        : undefined;
      if (hit) {
        logLine("info", `CACHED ${what}`, step);
        state = hit;
        b.parentLayers = [...state.layers];
        reused++;
        continue;
      }
      reuse = false;
      logLine("info", what, step);
      const currentStep = step;
      const buildState: BuildState = {
        agent: undefined,
        envs: { ...state.envs },
        user: state.user,
        workdir: state.workdir,
        log: (level, message) => logLine(level, message, currentStep),
        findFiles: (hash) => deps.files.find(hash),
      };
      // ENV changes the build's state, not its files: no sandbox, no layer.
      const changesFiles = s.type.toUpperCase() !== "ENV";
      if (changesFiles) {
        buildState.agent = await box.ensure(state);
        checkCancelled();
      }
      await runStep(s, buildState);
      const made = changesFiles ? await box.capture() : { layer: undefined, bytes: 0 };
      state = {
        layers: made.layer ? [...state.layers, made.layer] : state.layers,
        envs: buildState.envs,
        user: buildState.user,
        workdir: buildState.workdir,
      };
      // Recorded at once (no await in between): a garbage collection meanwhile sees the layer in use.
      deps.catalog.cache.record(key, state, made.layer, made.bytes);
      b.parentLayers = [...state.layers];
      await deps.catalog.saveCache();
    }
    if (plan.steps.length > 0)
      logLine("info", `Reused ${reused} of ${plan.steps.length} steps from the cache`, step);
    step = BUILD_STEP.finalize;
    let layers = state.layers;
    if (plan.startCmd || plan.readyCmd) {
      // Not cached, as on E2B: what the start command leaves is the build's own top layer.
      const agent = await box.ensure(state);
      checkCancelled();
      await finalizeBuild(agent, state, plan, logLine);
      logLine("info", "Capturing the template filesystem", step);
      const made = await box.capture();
      if (made.layer) layers = [...layers, made.layer];
    }
    const output: BuildOutput = {
      layers,
      envs: state.envs,
      defaultUser: state.user,
      ...(state.workdir ? { defaultWorkdir: state.workdir } : {}),
      ...(plan.startCmd ? { startCmd: plan.startCmd } : {}),
      ...(plan.readyCmd ? { readyCmd: plan.readyCmd } : {}),
    };
    await finishBuild(deps.catalog, t, b, { output });
    logLine("info", "Build finished", step);
    ended();
  } catch (err) {
    const message = cancelled.aborted
      ? `the build was cancelled: ${String(cancelled.reason)}`
      : err instanceof StepFailure
        ? err.message
        : `internal error: ${SandboxIacError.from(err, { operation: "templates.build" }).reason}`;
    logLine("error", `Build failed: ${message}`, step);
    await finishBuild(deps.catalog, t, b, { failure: { message, step } });
    ended();
  } finally {
    await box.close();
    await deps.catalog.logs.flush(b.buildID);
    // Layers of a failed build's finalize, of cache entries evicted or replaced, of a template deleted meanwhile.
    await deps.catalog
      .collectGarbage(`build ${b.buildID} ended`)
      .catch((e: unknown) =>
        deps.log(
          `templates: garbage collection: ${SandboxIacError.from(e, { operation: "templates.gc" }).reason}`,
        ),
      );
  }
}

/** Records the outcome (the garbage collection after the build takes the layers of a template deleted meanwhile). */
/** Records the outcome (the garbage collection after the build takes the layers of a template deleted meanwhile). */
export async function finishBuild(
  catalog: TemplateCatalog,
  t: TemplateRecord,
  b: BuildRecord,
  outcome: Pick<BuildRecord, "output" | "failure">,
): Promise<void> {
  const now = new Date().toISOString();
  b.status = outcome.output ? "ready" : "error";
  if (outcome.output) b.output = outcome.output;
  if (outcome.failure) b.failure = outcome.failure;
  b.updatedAt = now;
  b.finishedAt = now;
  delete b.parentLayers;
  delete b.buildSandboxId;
  t.updatedAt = now;
  await catalog.save();
}

function describeStep(s: TemplateStep): string {
  if (s.type.toUpperCase() === "COPY") return `COPY ${s.args[0] ?? ""} ${s.args[1] ?? ""}`;
  if (s.type.toUpperCase() === "ENV")
    return `ENV ${s.args.filter((_, i) => i % 2 === 0).join(" ")}`;
  return `${s.type} ${s.args.join(" ")}`.trim();
}
