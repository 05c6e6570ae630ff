/**
 * Runs template builds in the background: the steps in order on the parent's
 * layers (a template's build or an image), each step's result a layer of its
 * own kept in the step cache, so that an unchanged prefix of steps is reused
 * (logged `CACHED Step i/n: …`) and the first changed or forced step and
 * every step after it run; then the start and ready commands, whose effects
 * are the build's top layer. Status goes `waiting` → `building` →
 * `ready` | `error`; at most {@link MAX_CONCURRENT_BUILDS} run at once.
 *
 * @module
 */
import { layerExists } from "../../runtime/layers";
import type { SandboxRuntime } from "../../runtime/types";
import type { TemplateCatalog } from "./catalog";
import type { TemplateFileStore } from "./file-store";
import { BUILD_STEP, MAX_CONCURRENT_BUILDS } from "./constants";
import type { BuildOutput, BuildRecord, LogLevel, TemplateRecord } from "./model";
import type { ResolvedTemplate } from "./lookup";
import { runStep, StepFailure, type BuildState, type TemplateStep } from "./build-steps";
import { SandboxIacError } from "../../../errors";
import type { ImageSource } from "./image-source";
import { BuildSandbox } from "./build-sandbox";
import { BuildSlots } from "./build-slots";
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

/** Options of {@link BuildRunner}. */
export interface BuildRunnerOptions {
  /** Registries (`host:port`) pulled over plain HTTP besides loopback ones. */
  insecureRegistries: readonly string[];
}

/** Starts builds and keeps their number bounded. */
export class BuildRunner {
  private readonly slots = new BuildSlots(MAX_CONCURRENT_BUILDS);
  private readonly active = new Set<Promise<void>>();
  /**
   * Builds started and not ended yet, by build ID: how to cancel them, when
   * their outcome is recorded (`ended`) and when they are cleaned up (`job`).
   * Registered in the same synchronous run as the build becomes `building`:
   * a cancel that sees `building` always finds its build here.
   */
  private readonly inFlight = new Map<
    string,
    { job: Promise<void>; ended: Promise<void>; cancel: (why: string) => void }
  >();

  constructor(
    private readonly catalog: TemplateCatalog,
    private readonly files: TemplateFileStore,
    private readonly runtime: SandboxRuntime,
    private readonly log: (line: string) => void,
    private readonly dataDir: string,
    private readonly options: BuildRunnerOptions = { insecureRegistries: [] },
  ) {}

  /**
   * Marks the build `building`, persists, and runs it in the background.
   * Resolves once the new status is durable, not when the build ends.
   */
  async start(t: TemplateRecord, b: BuildRecord, plan: BuildPlan): Promise<void> {
    const now = new Date().toISOString();
    b.status = "building";
    b.updatedAt = now;
    b.parentLayers = [...(plan.from?.layers ?? [])];
    this.catalog.logs.create(b.buildID);
    const source = plan.image
      ? `image ${plan.image.written}`
      : (plan.from?.alias ?? plan.from?.templateID ?? "?");
    this.catalog.logs.append(
      b.buildID,
      "info",
      `Building ${t.name ?? t.templateID} from ${source}`,
      BUILD_STEP.base,
    );
    const cancel = new AbortController();
    let markEnded = () => {};
    const ended = new Promise<void>((resolve) => (markEnded = resolve));
    const saved = this.catalog.save();
    const job = saved
      .then(() => this.slots.whenFree(cancel.signal))
      .then(async (slot) => {
        try {
          await this.run(t, b, plan, cancel.signal, markEnded);
        } finally {
          if (slot) this.slots.release();
        }
      })
      .catch((err: unknown) =>
        this.log(
          `templates: build ${b.buildID} crashed: ${SandboxIacError.from(err, { operation: "templates.build" }).reason}`,
        ),
      )
      .finally(() => {
        markEnded();
        this.active.delete(job);
        this.inFlight.delete(b.buildID);
      });
    this.active.add(job);
    this.inFlight.set(b.buildID, { job, ended, cancel: (why) => cancel.abort(why) });
    await saved;
  }

  /**
   * Cancels build `buildID`, whatever it is doing (waiting for a slot,
   * preparing its base, starting its sandbox, running a step, capturing a
   * layer): it ends as `error`, its failure saying "the build was cancelled:
   * <why>", its build sandbox is stopped and destroyed and no layer of it is
   * left half-made. Resolves once that outcome is recorded; with
   * `waitForCleanUp`, once its sandbox and layers are cleaned up too. A build
   * that is not running resolves at once.
   */
  async cancel(
    buildID: string,
    why = "its template was deleted",
    opts: { waitForCleanUp?: boolean } = {},
  ): Promise<void> {
    const found = this.inFlight.get(buildID);
    if (!found) return;
    found.cancel(why);
    await (opts.waitForCleanUp ? found.job : found.ended);
  }

  /**
   * Ends build `b` of `t` as `error` ("the build was cancelled: <why>") when
   * it is still `waiting` (its files being uploaded, never started): a client
   * that stops mid-upload leaves no build waiting forever. Builds that run are
   * cancelled through {@link cancel}; ended ones are left as they are.
   */
  async cancelWaiting(t: TemplateRecord, b: BuildRecord, why: string): Promise<void> {
    if (b.status !== "waiting") return;
    const message = `the build was cancelled: ${why}`;
    this.catalog.logs.create(b.buildID);
    this.catalog.logs.append(b.buildID, "error", `Build failed: ${message}`, BUILD_STEP.base);
    await this.finish(t, b, { failure: { message, step: BUILD_STEP.base } });
    await this.catalog.logs.flush(b.buildID);
  }

  /** Resolves once every build started so far has ended (used at shutdown and in tests). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active]);
  }

  private async run(
    t: TemplateRecord,
    b: BuildRecord,
    plan: BuildPlan,
    cancelled: AbortSignal,
    ended: () => void,
  ): Promise<void> {
    const logLine = (level: LogLevel, message: string, step?: string) =>
      this.catalog.logs.append(b.buildID, level, message, step);
    // A cancel stops the build sandbox, so the step in progress fails; the failure is reported as the cancel.
    const box = new BuildSandbox(this.runtime, this.catalog, this.dataDir, b, this.log, cancelled);
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
            catalog: this.catalog,
            runtime: this.runtime,
            insecureRegistries: this.options.insecureRegistries,
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
          ? await this.catalog.cache.find(key, (l) => layerExists(this.dataDir, l))
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
          findFiles: (hash) => this.files.find(hash),
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
        this.catalog.cache.record(key, state, made.layer, made.bytes);
        b.parentLayers = [...state.layers];
        await this.catalog.saveCache();
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
      await this.finish(t, b, { output });
      logLine("info", "Build finished", step);
      ended();
    } catch (err) {
      const message = cancelled.aborted
        ? `the build was cancelled: ${String(cancelled.reason)}`
        : err instanceof StepFailure
          ? err.message
          : `internal error: ${SandboxIacError.from(err, { operation: "templates.build" }).reason}`;
      logLine("error", `Build failed: ${message}`, step);
      await this.finish(t, b, { failure: { message, step } });
      ended();
    } finally {
      await box.close();
      await this.catalog.logs.flush(b.buildID);
      // Layers of a failed build's finalize, of cache entries evicted or replaced, of a template deleted meanwhile.
      await this.catalog
        .collectGarbage(`build ${b.buildID} ended`)
        .catch((e: unknown) =>
          this.log(
            `templates: garbage collection: ${SandboxIacError.from(e, { operation: "templates.gc" }).reason}`,
          ),
        );
    }
  }

  /** Records the outcome (the garbage collection after the build takes the layers of a template deleted meanwhile). */
  private async finish(
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
    await this.catalog.save();
  }
}

function describeStep(s: TemplateStep): string {
  if (s.type.toUpperCase() === "COPY") return `COPY ${s.args[0] ?? ""} ${s.args[1] ?? ""}`;
  if (s.type.toUpperCase() === "ENV")
    return `ENV ${s.args.filter((_, i) => i % 2 === 0).join(" ")}`;
  return `${s.type} ${s.args.join(" ")}`.trim();
}
