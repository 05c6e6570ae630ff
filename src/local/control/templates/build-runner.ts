/**
 * Runs template builds in the background: the steps in order on the parent's
 * layers (a template's build or an image), each step's result a layer of its
 * own kept in the step cache, so that an unchanged prefix of steps is reused
 * (logged `CACHED Step i/n: …`) and the first changed or forced step and
 * every step after it run; then the start and ready commands, whose effects
 * are the build's top layer. Status goes `waiting` → `building` →
 * `ready` | `error`; at most {@link MAX_CONCURRENT_BUILDS} run at once.
 *
 * This file starts, bounds and cancels builds; what one build does once it
 * holds a slot, from its base to its outcome, is build-run.ts.
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";
import type { TemplateCatalog } from "./catalog";
import type { TemplateFileStore } from "./file-store";
import { BUILD_STEP, MAX_CONCURRENT_BUILDS } from "./constants";
import type { BuildRecord, TemplateRecord } from "./model";
import { SandboxIacError } from "../../../errors";
import { BuildSlots } from "./build-slots";
import { finishBuild, runBuild, type BuildPlan, type BuildRunDeps } from "./build-run";

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
          await runBuild(this.runDeps(), t, b, plan, cancel.signal, markEnded);
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
    await finishBuild(this.catalog, t, b, { failure: { message, step: BUILD_STEP.base } });
    await this.catalog.logs.flush(b.buildID);
  }

  /** Resolves once every build started so far has ended (used at shutdown and in tests). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active]);
  }

  /** What a build's run works with (build-run.ts). */
  private runDeps(): BuildRunDeps {
    return {
      catalog: this.catalog,
      files: this.files,
      runtime: this.runtime,
      log: this.log,
      dataDir: this.dataDir,
      insecureRegistries: this.options.insecureRegistries,
    };
  }
}
