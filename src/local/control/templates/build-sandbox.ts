/**
 * The sandbox a build runs its steps in. Like Docker's builder, each step
 * that changes files gets a layer of its own (what it changed, captured
 * with the sandbox frozen), which lets a later build reuse any unchanged
 * prefix of steps. One sandbox serves the steps that run, started on the
 * layers below the first of them only when a step needs it (cached steps and
 * `ENV` steps need none).
 *
 * @module
 */
import { layerDiskBytes, layerIsEmpty } from "../../runtime/layers";
import type { RuntimeSandbox, SandboxRuntime } from "../../runtime/types";
import { randomID } from "../../../wire/ids";
import { SandboxIacError } from "../../../errors";
import { agentClient, type AgentClient } from "../agent-client";
import type { TemplateCatalog } from "./catalog";
import type { BuildRecord } from "./model";
import type { StepState } from "./step-cache";

/** A layer a step made; none when the step changed no file. */
export interface CapturedLayer {
  layer: string | undefined;
  bytes: number;
}

/**
 * Starts, captures and disposes of a build's sandboxes, one at a time.
 * Cancellation holds by construction: once `cancelled` fires, the sandbox
 * running is stopped, one still starting is stopped as soon as it is up
 * ({@link ensure} then throws), no new one starts, and a capture under way
 * is thrown away ({@link capture} deletes the layer it made and throws).
 */
export class BuildSandbox {
  private current: RuntimeSandbox | undefined;
  private agent: AgentClient | undefined;
  private currentID: string | undefined;
  /** The stop of {@link current}, once asked for: every caller awaits the same one. */
  private stopping: Promise<void> | undefined;
  /** A start the cancel interrupted the wait for: {@link dispose} stops and destroys what it brings up. */
  private starting: Promise<RuntimeSandbox> | undefined;
  /** Deletions of interrupted captures, awaited by {@link close}. */
  private readonly cleanUps: Promise<unknown>[] = [];
  private readonly onCancel = () => void this.stop().catch(() => undefined);

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly catalog: TemplateCatalog,
    private readonly dataDir: string,
    private readonly build: BuildRecord,
    private readonly log: (line: string) => void,
    private readonly cancelled: AbortSignal,
  ) {
    cancelled.addEventListener("abort", this.onCancel);
  }

  /** The agent of the running sandbox on `state`'s layers, started (and set up) when none runs. */
  async ensure(state: StepState): Promise<AgentClient> {
    this.throwIfCancelled();
    if (this.current && this.agent && !this.stopping) return this.agent;
    await this.dispose();
    this.throwIfCancelled();
    const sandboxID = `b${randomID(20)}`;
    // Recorded first, so that a restart destroys what a crash left of it.
    this.build.buildSandboxId = sandboxID;
    this.currentID = sandboxID;
    await this.catalog.save();
    this.throwIfCancelled();
    const starting = this.runtime.start({
      sandboxID,
      layers: state.layers,
      cpuCount: this.build.cpuCount,
      memoryMB: this.build.memoryMB,
      allowInternetAccess: true,
    });
    this.starting = starting;
    // A start takes seconds on a busy host: a cancel ends the wait at once, dispose() finishes the job.
    const sandbox = await this.untilCancelled(starting);
    // Set with no await since the start resolved: a cancel from now on finds it and stops it.
    this.starting = undefined;
    this.current = sandbox;
    // A cancel between the start's end and here found no sandbox to stop: the build's dispose() does.
    this.throwIfCancelled();
    const agent = agentClient(sandbox);
    await this.untilCancelled(
      agent.init({
        envVars: state.envs,
        defaultUser: state.user,
        defaultWorkdir: state.workdir,
      }),
    );
    this.agent = agent;
    return agent;
  }

  /**
   * Turns what the running sandbox changed since the previous capture into a
   * layer (none when it changed nothing); its processes are frozen meanwhile
   * and it goes on running for the next step. A capture the build's cancel
   * (or a failure) interrupts keeps nothing: its layer is deleted.
   */
  async capture(): Promise<CapturedLayer> {
    this.throwIfCancelled();
    const sandbox = this.current;
    if (!sandbox || this.stopping)
      throw new SandboxIacError("internal", "no build sandbox runs", {
        operation: "templates.build",
      });
    let capturing: Promise<string> | undefined;
    let layer: string | undefined;
    try {
      await this.untilCancelled(sandbox.freeze());
      try {
        capturing = this.runtime.captureLayer(sandbox.sandboxID, { sinceLastCapture: true });
        layer = await this.untilCancelled(capturing);
      } finally {
        // Cancelled: the sandbox is being stopped (its stop thaws it first), nothing to thaw.
        if (!this.stopping) await sandbox.thaw();
      }
      // Copied while the sandbox was being killed: not a step's whole result.
      this.throwIfCancelled();
      if (await layerIsEmpty(this.dataDir, layer)) {
        await this.runtime.deleteLayer(layer);
        return { layer: undefined, bytes: 0 };
      }
      return { layer, bytes: await layerDiskBytes(this.dataDir, layer) };
    } catch (err) {
      // The copy may go on after a cancel ended the wait: what it makes is deleted once made.
      const made: Promise<string | undefined> =
        layer !== undefined ? Promise.resolve(layer) : (capturing ?? Promise.resolve(undefined));
      this.cleanUps.push(
        made
          .catch(() => undefined)
          .then((l) => (l === undefined ? undefined : this.runtime.deleteLayer(l)))
          .catch((e: unknown) => this.report("deleting an interrupted capture", e)),
      );
      throw err;
    }
  }

  /** Stops the running sandbox (a step in progress fails); its writable layer stays. */
  stop(): Promise<void> {
    if (!this.current) return Promise.resolve();
    this.stopping ??= this.current.stop();
    return this.stopping;
  }

  /** Stops and destroys the current sandbox, if any; failures are logged, not thrown. */
  async dispose(): Promise<void> {
    const id = this.currentID;
    if (!id) return;
    if (this.starting) {
      const started = await this.starting.catch(() => undefined);
      this.starting = undefined;
      if (started) this.current = started;
    }
    await this.stop().catch((e: unknown) => this.report(`stopping ${id}`, e));
    await this.runtime.destroy(id).catch((e: unknown) => this.report(`destroying ${id}`, e));
    this.current = undefined;
    this.agent = undefined;
    this.currentID = undefined;
    this.stopping = undefined;
    delete this.build.buildSandboxId;
  }

  /**
   * Ends the build sandbox's life: stops listening for the cancel, disposes of
   * the sandbox and waits for the deletion of interrupted captures.
   */
  async close(): Promise<void> {
    this.cancelled.removeEventListener("abort", this.onCancel);
    await this.dispose();
    await Promise.all(this.cleanUps);
  }

  private throwIfCancelled(): void {
    if (this.cancelled.aborted) throw this.cancelError();
  }

  private cancelError(): SandboxIacError {
    return new SandboxIacError(
      "canceled",
      `the build was cancelled: ${String(this.cancelled.reason)}`,
      { operation: "templates.build", resourceId: this.build.buildID },
    );
  }

  /** `work`'s outcome, or the cancel error as soon as the build is cancelled (`work` goes on). */
  private untilCancelled<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.cancelError());
      if (this.cancelled.aborted) onAbort();
      else this.cancelled.addEventListener("abort", onAbort, { once: true });
      work
        .then(resolve, reject)
        .finally(() => this.cancelled.removeEventListener("abort", onAbort));
    });
  }

  private report(what: string, err: unknown): void {
    this.log(
      `templates: ${what}: ${SandboxIacError.from(err, { operation: "templates.build" }).reason}`,
    );
  }
}
