/**
 * The sandbox manager: the set of sandboxes, their lifecycle (create, pause,
 * resume, kill, timeouts), their persistence in the state file, and the
 * handles the proxy needs to reach a running sandbox.
 *
 * Every state change of one sandbox runs under that sandbox's lock, so a
 * timeout firing during a pause, or a kill during a resume, cannot interleave.
 *
 * @module
 */
import { needsTrafficToken, type NetworkUpdate } from "./network";
import { serviceError } from "../http";
import { JsonStateWriter } from "../state-file";
import { envdAccessToken, trafficAccessToken } from "../tokens";
import { forgettingTokens, type SandboxLifecycle } from "./runtime-lifecycle";
import { ConcurrencyLimit } from "./concurrency";
import { startSandbox, type CreateContext } from "./create";
import { forkInput } from "./fork-policy";
import { expire } from "./expiry";
import { appendLog } from "./logs";
import { newSandboxID } from "./ids";
import { arm, extendTo } from "./lifetime";
import {
  addConnection,
  lockedEntry,
  newKnownSandbox,
  notFound,
  type KnownSandbox,
  type ProxiedExchange,
  type ReachableSandbox,
} from "./known-sandbox";
import type { CreateSandboxInput } from "./create-input";
import type { SandboxManagerOptions } from "./manager-options";
import type { SandboxManagerView } from "./manager-view";
import { MetricsStore } from "./metrics";
import {
  attach,
  pauseLocked,
  resumeLocked,
  stopProcesses,
  whileFrozen,
  type PauseResumeContext,
} from "./pause-resume";
import { sandboxView, type SandboxRecord } from "./record";
import { removeOrphans, restoreRecords, sandboxesStateWriter } from "./restore";
import { sampleSandbox, startSampling } from "./sampler";
import { DEFAULT_CONNECT_TIMEOUT_SECONDS } from "./schemas";
import { stopForShutdown } from "./shutdown";
import { WarmPool } from "./warm-pool";
import { PRIMED_TEMPLATE, warmSpec, warmUpAgent } from "./warm-up";
import { PreInits } from "./pre-init";

export type { CreateSandboxInput } from "./create-input";
export type { SandboxManagerOptions } from "./manager-options";
export { notFound } from "./known-sandbox";
export { SANDBOXES_STATE_FILE } from "./restore";

/** Owns every sandbox of the service. */
export class SandboxManager implements SandboxManagerView {
  /** Resource samples of running sandboxes. */
  readonly metrics = new MetricsStore();
  private readonly known = new Map<string, KnownSandbox>();
  private readonly writer: JsonStateWriter;
  private sampler: NodeJS.Timeout | undefined;
  private closed = false;
  /** Started sandboxes waiting for a create; never part of `known`. */
  private readonly pool: WarmPool;
  /** The `/init` each warm key's members get during their warm-up. */
  private readonly preInits = new PreInits();
  /** What the pause/resume state changes need of this manager. */
  private readonly ctx: PauseResumeContext;
  /** What create needs of this manager. */
  private readonly createCtx: CreateContext;
  /** Sandboxes whose first proxied exchange ended (the pool's refill waits for it). */
  private readonly exchanged = new WeakSet<KnownSandbox>();
  /** The team's concurrent-sandbox limit (the service has one API key, so one team). */
  private readonly concurrency: ConcurrencyLimit;
  /** Every start and destroy of a sandbox the manager makes: a destroy also forgets its tokens. */
  private readonly lifecycle: SandboxLifecycle;

  private constructor(private readonly opts: SandboxManagerOptions) {
    this.lifecycle = forgettingTokens(opts.runtime, opts.tokenSecret);
    this.pool = new WarmPool({
      runtime: this.lifecycle,
      newId: newSandboxID,
      log: opts.log,
      warmUp: async (processes, spec) => {
        await warmUpAgent(processes);
        await this.preInits.send(processes, spec);
      },
      size: opts.warmPoolSize,
    });
    this.writer = sandboxesStateWriter(opts.dataDir, () =>
      [...this.known.values()].map((sandbox) => sandbox.record),
    );
    this.ctx = {
      runtime: opts.runtime,
      tokenOf: (record) => this.tokenOf(record),
      flush: () => this.writer.flush(),
      arm: (sandbox) => this.arm(sandbox),
    };
    this.concurrency = new ConcurrencyLimit(
      opts.maxSandboxesPerKey ?? opts.runtime.maxSandboxes,
      () => [...this.known.values()].filter((sandbox) => sandbox.record.state === "running").length,
    );
    this.createCtx = {
      runtime: this.lifecycle,
      templates: opts.templates,
      pool: this.pool,
      preInits: this.preInits,
      tokenOf: (record) => this.tokenOf(record),
    };
  }

  /**
   * Loads the state file. Sandboxes recorded there lost their processes with
   * the previous service, so they all come back `paused` on their kept layer.
   */
  static async open(opts: SandboxManagerOptions): Promise<SandboxManager> {
    const manager = new SandboxManager(opts);
    for (const record of await restoreRecords(opts.dataDir)) {
      manager.known.set(record.sandboxID, newKnownSandbox(record));
    }
    await manager.writer.flush();
    await removeOrphans({
      dataDir: opts.dataDir,
      runtime: opts.runtime,
      isKnown: (id) => manager.known.has(id),
      log: opts.log,
    });
    manager.sampler = startSampling(manager.metrics, () => manager.known.values());
    // A deleted template or snapshot is never started ahead of time again.
    opts.templates.onLayerRelease?.((layerId) => manager.pool.forgetLayer(layerId));
    const base = opts.templates.resolve(PRIMED_TEMPLATE);
    if (base) manager.pool.prime(warmSpec(base, true));
    return manager;
  }

  /** Ids of warm-pool members (started, not sandboxes of the API until a create claims one). */
  warmIds(): string[] {
    return this.pool.readyIds();
  }

  /** The access token of a secure sandbox. */
  tokenOf(record: SandboxRecord): string | undefined {
    return record.secure ? envdAccessToken(this.opts.tokenSecret, record.sandboxID) : undefined;
  }

  /** The domain answers carry (`null`: none configured, the client's own applies). */
  servedDomain(): string | null {
    return this.opts.domain?.() ?? null;
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
    return needsTrafficToken(record)
      ? trafficAccessToken(this.opts.tokenSecret, record.sandboxID)
      : undefined;
  }

  /**
   * Replaces a sandbox's outbound rules (and, when given, its internet
   * access): at once when it runs, at its next start when paused.
   */
  async updateNetwork(sandboxID: string, update: NetworkUpdate): Promise<void> {
    await this.locked(sandboxID, async (sandbox) => {
      const r = sandbox.record;
      const rules = Object.keys(update.rules).length > 0 ? update.rules : undefined;
      r.network = {
        ...r.network,
        allowOut: update.allowOut,
        denyOut: update.denyOut,
        rules,
        egressProxy: update.egressProxy,
      };
      if (update.allowInternetAccess !== undefined)
        r.allowInternetAccess = update.allowInternetAccess;
      if (sandbox.processes && r.state === "running") {
        await sandbox.processes.setNetwork({
          ...r.network,
          allowInternetAccess: r.allowInternetAccess,
        });
      }
      await this.writer.flush();
    });
  }

  /**
   * Adds a line from the service (the egress edge) to a sandbox's log
   * (`GET /v2/sandboxes/:id/logs`); dropped when the sandbox is gone.
   */
  noteSandboxLog(sandboxID: string, message: string): void {
    const record = this.known.get(sandboxID)?.record;
    if (record) appendLog(record, "warn", message, { source: "egress-edge" });
  }

  /** A sandbox's record, when it is running or paused. */
  get(sandboxID: string): SandboxRecord | undefined {
    return this.known.get(sandboxID)?.record;
  }

  /** Every record. */
  all(): SandboxRecord[] {
    return [...this.known.values()].map((sandbox) => sandbox.record);
  }

  /** {@inheritDoc SandboxManagerView.exists} */
  exists(sandboxID: string): boolean {
    return this.known.has(sandboxID);
  }

  /** {@inheritDoc SandboxManagerView.isTemplateInUse} */
  isTemplateInUse(templateID: string): boolean {
    return this.all().some((r) => r.templateID === templateID);
  }

  /** The running, unfrozen runtime sandbox the proxy may talk to. */
  reachable(sandboxID: string): ReachableSandbox | undefined {
    const sandbox = this.known.get(sandboxID);
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
    const sandbox = this.known.get(sandboxID);
    if (!sandbox) {
      exchange.cut();
      return () => undefined;
    }
    const untrack = addConnection(sandbox, exchange);
    return () => {
      untrack();
      if (this.exchanged.has(sandbox)) return;
      this.exchanged.add(sandbox);
      this.pool.claimedExchanged();
    };
  }

  /** Creates a sandbox; all-or-nothing. */
  async create(input: CreateSandboxInput): Promise<SandboxRecord> {
    this.assertOpen();
    const release = this.concurrency.admit();
    let sandbox: KnownSandbox;
    let phases: string;
    try {
      const started = await startSandbox(this.createCtx, input);
      const { record, processes } = started;
      phases = started.phases;
      sandbox = newKnownSandbox(record);
      attach(this.ctx, sandbox, processes);
      this.known.set(record.sandboxID, sandbox);
    } finally {
      release();
    }
    const record = sandbox.record;
    this.arm(sandbox);
    // The creation sample (metrics are never empty for a running sandbox: their readers wait
    // for it) is not waited for: its cgroup reads took as long as the state file's write.
    this.metrics.firstSample(record.sandboxID, sampleSandbox(this.metrics, sandbox));
    const t0 = performance.now();
    await this.writer.flush();
    // Where a create's time went on the service (bench/local.js prints the loop's from its log).
    this.opts.log(
      `sandbox ${record.sandboxID}: created, ${phases}, state ${(performance.now() - t0).toFixed(0)} ms`,
    );
    return record;
  }

  /** {@inheritDoc SandboxManagerView.createFork} */
  async createFork(parentID: string, templateID: string, timeoutSec: number): Promise<object> {
    const parent = this.known.get(parentID)?.record;
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
    await this.locked(sandboxID, (sandbox) => this.killLocked(sandbox));
  }

  /** Pauses a running sandbox; `memory: false` stops its processes instead of freezing them. */
  async pause(sandboxID: string, memory: boolean): Promise<void> {
    await this.locked(sandboxID, async (sandbox) => {
      if (sandbox.record.state === "paused")
        throw serviceError("conflict", `Sandbox ${sandboxID} is already paused`);
      await pauseLocked(this.ctx, sandbox, memory, "sandbox paused");
    });
  }

  /** Resumes a paused sandbox (409 when running). */
  async resume(sandboxID: string, timeoutSec: number): Promise<SandboxRecord> {
    return this.locked(sandboxID, async (sandbox) => {
      if (sandbox.record.state === "running")
        throw serviceError("conflict", `Sandbox ${sandboxID} is already running`);
      const release = this.concurrency.admit();
      try {
        await resumeLocked(this.ctx, sandbox, timeoutSec);
      } finally {
        release();
      }
      return sandbox.record;
    });
  }

  /** Connects: extends a running sandbox's end, or resumes a paused one. */
  async connect(
    sandboxID: string,
    timeoutSec: number | undefined,
  ): Promise<{ record: SandboxRecord; resumed: boolean }> {
    return this.locked(sandboxID, async (sandbox) => {
      if (sandbox.record.state === "running") {
        if (timeoutSec !== undefined) this.extendTo(sandbox, Date.now() + timeoutSec * 1000);
        await this.writer.flush();
        return { record: sandbox.record, resumed: false };
      }
      const release = this.concurrency.admit();
      try {
        await resumeLocked(this.ctx, sandbox, timeoutSec ?? DEFAULT_CONNECT_TIMEOUT_SECONDS);
      } finally {
        release();
      }
      return { record: sandbox.record, resumed: true };
    });
  }

  /** Overwrites a running sandbox's end: now + `timeoutSec` (may shorten). */
  async setTimeout(sandboxID: string, timeoutSec: number): Promise<void> {
    await this.locked(sandboxID, async (sandbox) => {
      if (sandbox.record.state !== "running")
        throw serviceError(
          "conflict",
          `Sandbox ${sandboxID} is not running (state '${sandbox.record.state}'); resume it first`,
        );
      sandbox.record.endAt = new Date(Date.now() + Math.max(0, timeoutSec) * 1000).toISOString();
      this.arm(sandbox);
      await this.writer.flush();
    });
  }

  /** Extends a running sandbox's end to at least now + `durationSec`. */
  async refresh(sandboxID: string, durationSec: number): Promise<void> {
    await this.locked(sandboxID, async (sandbox) => {
      if (sandbox.record.state !== "running") return;
      this.extendTo(sandbox, Date.now() + durationSec * 1000);
      await this.writer.flush();
    });
  }

  /** {@inheritDoc SandboxManagerView.runWhileFrozen} */
  async runWhileFrozen<T>(
    sandboxID: string,
    fn: (templateID: string, buildID?: string) => Promise<T>,
  ): Promise<T> {
    return this.locked(sandboxID, (sandbox) =>
      whileFrozen(sandbox, () => fn(sandbox.record.templateID, sandbox.record.buildID)),
    );
  }

  /**
   * Stops every sandbox's processes (their layers stay); they come back
   * paused on the next start. Then closes the runtime.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sampler) clearInterval(this.sampler);
    await this.pool.close();
    await stopForShutdown(this.known.values(), this.opts.log);
    await this.writer.flush();
    await this.opts.runtime.close();
  }

  private assertOpen(): void {
    if (this.closed)
      throw serviceError(
        "unavailable",
        "the local sandbox service is shutting down; start it again",
      );
  }

  private async locked<T>(
    sandboxID: string,
    fn: (sandbox: KnownSandbox) => Promise<T>,
  ): Promise<T> {
    this.assertOpen();
    const sandbox = this.known.get(sandboxID);
    if (!sandbox) throw notFound(sandboxID);
    return lockedEntry(sandbox, async () => {
      if (sandbox.gone) throw notFound(sandboxID);
      return fn(sandbox);
    });
  }

  /** Stops `sandbox`, forgets it and deletes its writable layer; the caller holds its lock. */
  private async killLocked(sandbox: KnownSandbox): Promise<void> {
    const id = sandbox.record.sandboxID;
    await stopProcesses(sandbox);
    sandbox.gone = true;
    this.known.delete(id);
    this.metrics.drop(id);
    await this.writer.flush();
    // Its tokens open nothing any more once it is destroyed: the lifecycle forgets them.
    await this.lifecycle.destroy(id);
  }

  private arm(sandbox: KnownSandbox): void {
    arm(sandbox, (expired) => void this.onTimeout(expired));
  }

  private extendTo(sandbox: KnownSandbox, endMs: number): void {
    extendTo(sandbox, endMs, (expired) => void this.onTimeout(expired));
  }

  private async onTimeout(sandbox: KnownSandbox): Promise<void> {
    await expire(
      {
        pause: (x, reason, memory) => pauseLocked(this.ctx, x, memory, reason),
        kill: (x) => this.killLocked(x),
        log: this.opts.log,
      },
      sandbox,
    );
  }
}
