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

/** Starts, captures and disposes of a build's sandboxes, one at a time. */
export class BuildSandbox {
  private current: RuntimeSandbox | undefined;
  private agent: AgentClient | undefined;
  private currentID: string | undefined;
  private stopped = false;

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly catalog: TemplateCatalog,
    private readonly dataDir: string,
    private readonly build: BuildRecord,
    private readonly log: (line: string) => void,
  ) {}

  /** The agent of the running sandbox on `state`'s layers, started (and set up) when none runs. */
  async ensure(state: StepState): Promise<AgentClient> {
    if (this.current && this.agent && !this.stopped) return this.agent;
    await this.dispose();
    const sandboxID = `b${randomID(20)}`;
    // Recorded first, so that a restart destroys what a crash left of it.
    this.build.buildSandboxId = sandboxID;
    this.currentID = sandboxID;
    await this.catalog.save();
    this.stopped = false;
    this.current = await this.runtime.start({
      sandboxID,
      layers: state.layers,
      cpuCount: this.build.cpuCount,
      memoryMB: this.build.memoryMB,
      allowInternetAccess: true,
    });
    const agent = agentClient(this.current);
    await agent.init({
      envVars: state.envs,
      defaultUser: state.user,
      defaultWorkdir: state.workdir,
    });
    this.agent = agent;
    return agent;
  }

  /**
   * Turns what the running sandbox changed since the previous capture into a
   * layer (none when it changed nothing); its processes are frozen meanwhile
   * and it goes on running for the next step.
   */
  async capture(): Promise<CapturedLayer> {
    const sandbox = this.current;
    if (!sandbox || this.stopped)
      throw new SandboxIacError("internal", "no build sandbox runs", {
        operation: "templates.build",
      });
    await sandbox.freeze();
    let layer: string;
    try {
      layer = await this.runtime.captureLayer(sandbox.sandboxID, { sinceLastCapture: true });
    } finally {
      await sandbox.thaw();
    }
    if (await layerIsEmpty(this.dataDir, layer)) {
      await this.runtime.deleteLayer(layer);
      return { layer: undefined, bytes: 0 };
    }
    return { layer, bytes: await layerDiskBytes(this.dataDir, layer) };
  }

  /** Stops the running sandbox (a step in progress fails); its writable layer stays. */
  async stop(): Promise<void> {
    if (!this.current || this.stopped) return;
    this.stopped = true;
    await this.current.stop();
  }

  /** Stops and destroys the current sandbox, if any; failures are logged, not thrown. */
  async dispose(): Promise<void> {
    const id = this.currentID;
    if (!id) return;
    await this.stop().catch((e: unknown) => this.report(`stopping ${id}`, e));
    await this.runtime.destroy(id).catch((e: unknown) => this.report(`destroying ${id}`, e));
    this.current = undefined;
    this.agent = undefined;
    this.currentID = undefined;
    delete this.build.buildSandboxId;
  }

  private report(what: string, err: unknown): void {
    this.log(
      `templates: ${what}: ${SandboxIacError.from(err, { operation: "templates.build" }).reason}`,
    );
  }
}
