/**
 * The sandbox manager: the set of sandboxes, their lifecycle (create, pause,
 * resume, kill, timeouts), their persistence in the state file, and the
 * handles the proxy needs to reach a running sandbox.
 *
 * Every state change of one sandbox runs under that sandbox's lock, so a
 * timeout firing during a pause, or a kill during a resume, cannot interleave.
 *
 * This class answers the routes, the proxy and the templates side; the state
 * it holds is in manager-state.ts (made and restored at open by
 * manager-open.ts), the lock in manager-lock.ts, and the state changes in
 * files of their own: manager-create.ts, connect.ts (pause, resume,
 * connect), timeouts.ts, kill.ts, network-update.ts.
 *
 * @module
 */
import type { NetworkUpdate } from "./network";
import { serviceError } from "../http";
import { connectSandbox, pauseSandbox, resumeSandbox } from "./connect";
import { forkInput } from "./fork-policy";
import { killLocked } from "./kill";
import { appendLog } from "./logs";
import { addConnection, type ProxiedExchange, type ReachableSandbox } from "./known-sandbox";
import type { CreateSandboxInput } from "./create-input";
import { createSandbox } from "./manager-create";
import type { SandboxManagerOptions } from "./manager-options";
import { locked } from "./manager-lock";
import { openManagerState } from "./manager-open";
import type { ManagerState } from "./manager-state";
import type { SandboxManagerView } from "./manager-view";
import type { MetricsStore } from "./metrics";
import { updateNetwork } from "./network-update";
import { whileFrozen } from "./pause-resume";
import { sandboxView, type SandboxRecord } from "./record";
import { tokenOf, trafficTokenOf } from "./sandbox-tokens";
import { stopForShutdown } from "./shutdown";
import { refreshEnd, setEnd } from "./timeouts";

export type { CreateSandboxInput } from "./create-input";
export type { SandboxManagerOptions } from "./manager-options";
export { notFound } from "./known-sandbox";
export { SANDBOXES_STATE_FILE } from "./restore";

/** Owns every sandbox of the service. */
export class SandboxManager implements SandboxManagerView {
  /** Resource samples of running sandboxes. */
  readonly metrics: MetricsStore;

  private constructor(private readonly state: ManagerState) {
    this.metrics = state.metrics;
  }

  /**
   * Loads the state file. Sandboxes recorded there lost their processes with
   * the previous service, so they all come back `paused` on their kept layer.
   */
  static async open(opts: SandboxManagerOptions): Promise<SandboxManager> {
    return new SandboxManager(await openManagerState(opts));
  }

  /** Ids of warm-pool members (started, not sandboxes of the API until a create claims one). */
  warmIds(): string[] {
    return this.state.pool.readyIds();
  }

  /** The access token of a secure sandbox. */
  tokenOf(record: SandboxRecord): string | undefined {
    return tokenOf(this.state.opts.tokenSecret, record);
  }

  /** The domain answers carry (`null`: none configured, the client's own applies). */
  servedDomain(): string | null {
    return this.state.opts.domain?.() ?? null;
  }

  /** The `Sandbox` answer of create, connect, resume and fork for `record`. */
  view(record: SandboxRecord): Record<string, unknown> {
    return sandboxView(
      record,
      this.tokenOf(record),
      this.trafficTokenOf(record),
      this.servedDomain(),
    );
  }

  /** The traffic access token of a sandbox whose ports are not public. */
  trafficTokenOf(record: SandboxRecord): string | undefined {
    return trafficTokenOf(this.state.opts.tokenSecret, record);
  }

  /**
   * Replaces a sandbox's outbound rules (and, when given, its internet
   * access): at once when it runs, at its next start when paused.
   */
  async updateNetwork(sandboxID: string, update: NetworkUpdate): Promise<void> {
    await updateNetwork(this.state, sandboxID, update);
  }

  /**
   * Adds a line from the service (the egress edge) to a sandbox's log
   * (`GET /v2/sandboxes/:id/logs`); dropped when the sandbox is gone.
   */
  noteSandboxLog(sandboxID: string, message: string): void {
    const record = this.state.known.get(sandboxID)?.record;
    if (record) appendLog(record, "warn", message, { source: "egress-edge" });
  }

  /** A sandbox's record, when it is running or paused. */
  get(sandboxID: string): SandboxRecord | undefined {
    return this.state.known.get(sandboxID)?.record;
  }

  /** Every record. */
  all(): SandboxRecord[] {
    return [...this.state.known.values()].map((sandbox) => sandbox.record);
  }

  /** {@inheritDoc SandboxManagerView.exists} */
  exists(sandboxID: string): boolean {
    return this.state.known.has(sandboxID);
  }

  /** {@inheritDoc SandboxManagerView.isTemplateInUse} */
  isTemplateInUse(templateID: string): boolean {
    return this.all().some((r) => r.templateID === templateID);
  }

  /** The running, unfrozen runtime sandbox the proxy may talk to. */
  reachable(sandboxID: string): ReachableSandbox | undefined {
    const sandbox = this.state.known.get(sandboxID);
    if (
      !sandbox ||
      sandbox.gone ||
      sandbox.record.state !== "running" ||
      !sandbox.processes ||
      sandbox.frozen
    )
      return undefined;
    return { record: sandbox.record, processes: sandbox.processes };
  }

  /**
   * Registers a proxied exchange, cut when the sandbox stops being reachable.
   * Returns the function that unregisters it (call it when the exchange ends).
   */
  trackConnection(sandboxID: string, exchange: ProxiedExchange): () => void {
    const sandbox = this.state.known.get(sandboxID);
    if (!sandbox) {
      exchange.cut();
      return () => undefined;
    }
    const untrack = addConnection(sandbox, exchange);
    return () => {
      untrack();
      if (this.state.exchanged.has(sandbox)) return;
      this.state.exchanged.add(sandbox);
      this.state.pool.claimedExchanged();
    };
  }

  /** Creates a sandbox; all-or-nothing. */
  async create(input: CreateSandboxInput): Promise<SandboxRecord> {
    return createSandbox(this.state, input);
  }

  /** {@inheritDoc SandboxManagerView.createFork} */
  async createFork(parentID: string, templateID: string, timeoutSec: number): Promise<object> {
    const parent = this.state.known.get(parentID)?.record;
    if (!parent) {
      throw serviceError(
        "not_found",
        `Sandbox "${parentID}" doesn't exist or you don't have access to it`,
      );
    }
    const record = await this.create(forkInput(parent, templateID, timeoutSec));
    return this.view(record);
  }

  /** Kills a sandbox and deletes its writable layer. */
  async kill(sandboxID: string): Promise<void> {
    await locked(this.state, sandboxID, (sandbox) => killLocked(this.state, sandbox));
  }

  /** Pauses a running sandbox; `memory: false` stops its processes instead of freezing them. */
  async pause(sandboxID: string, memory: boolean): Promise<void> {
    await pauseSandbox(this.state, sandboxID, memory);
  }

  /** Resumes a paused sandbox (409 when running). */
  async resume(sandboxID: string, timeoutSec: number): Promise<SandboxRecord> {
    return resumeSandbox(this.state, sandboxID, timeoutSec);
  }

  /** Connects: extends a running sandbox's end, or resumes a paused one. */
  async connect(
    sandboxID: string,
    timeoutSec: number | undefined,
  ): Promise<{ record: SandboxRecord; resumed: boolean }> {
    return connectSandbox(this.state, sandboxID, timeoutSec);
  }

  /** Overwrites a running sandbox's end: now + `timeoutSec` (may shorten). */
  async setTimeout(sandboxID: string, timeoutSec: number): Promise<void> {
    await setEnd(this.state, sandboxID, timeoutSec);
  }

  /** Extends a running sandbox's end to at least now + `durationSec`. */
  async refresh(sandboxID: string, durationSec: number): Promise<void> {
    await refreshEnd(this.state, sandboxID, durationSec);
  }

  /** {@inheritDoc SandboxManagerView.runWhileFrozen} */
  async runWhileFrozen<T>(
    sandboxID: string,
    fn: (templateID: string, buildID?: string) => Promise<T>,
  ): Promise<T> {
    return locked(this.state, sandboxID, (sandbox) =>
      whileFrozen(sandbox, () => fn(sandbox.record.templateID, sandbox.record.buildID)),
    );
  }

  /**
   * Stops every sandbox's processes (their layers stay); they come back
   * paused on the next start. Then closes the runtime.
   */
  async close(): Promise<void> {
    const state = this.state;
    if (state.closed) return;
    state.closed = true;
    if (state.sampler) clearInterval(state.sampler);
    await state.pool.close();
    await stopForShutdown(state.known.values(), state.opts.log);
    await state.writer.flush();
    await state.opts.runtime.close();
  }
}
