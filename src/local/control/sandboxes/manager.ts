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
import type { RuntimeSandbox } from "../../runtime/types";
import { serviceError } from "../http";
import { JsonStateWriter } from "../state-file";
import { envdAccessToken, trafficAccessToken } from "../tokens";
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
  newLive,
  notFound,
  type Live,
  type ProxiedExchange,
} from "./live";
import type {
  CreateSandboxInput,
  SandboxManagerOptions,
  SandboxManagerView,
} from "./manager-contracts";
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
import { sampleLive, startSampling } from "./sampler";
import { DEFAULT_CONNECT_TIMEOUT_SECONDS } from "./schemas";
import { stopForShutdown } from "./shutdown";
import { WarmPool } from "./warm-pool";
import { PRIMED_TEMPLATE, warmSpec, warmUpAgent } from "./warm-up";

export type {
  CreateSandboxInput,
  SandboxManagerOptions,
  TemplateLookup,
} from "./manager-contracts";
export { notFound } from "./live";
export { SANDBOXES_STATE_FILE } from "./restore";

/** Owns every sandbox of the service. */
export class SandboxManager implements SandboxManagerView {
  /** Resource samples of running sandboxes. */
  readonly metrics = new MetricsStore();
  private readonly live = new Map<string, Live>();
  private readonly writer: JsonStateWriter;
  private sampler: NodeJS.Timeout | undefined;
  private closed = false;
  /** Started sandboxes waiting for a create; never part of `live`. */
  private readonly pool: WarmPool;
  /** What the pause/resume state changes need of this manager. */
  private readonly ctx: PauseResumeContext;
  /** What create needs of this manager. */
  private readonly createCtx: CreateContext;
  /** The team's concurrent-sandbox limit (the service has one API key, so one team). */
  private readonly concurrency: ConcurrencyLimit;

  private constructor(private readonly opts: SandboxManagerOptions) {
    this.pool = new WarmPool({
      runtime: opts.runtime,
      newId: newSandboxID,
      log: opts.log,
      warmUp: warmUpAgent,
      size: opts.warmPoolSize,
    });
    this.writer = sandboxesStateWriter(opts.dataDir, () =>
      [...this.live.values()].map((l) => l.record),
    );
    this.ctx = {
      runtime: opts.runtime,
      tokenOf: (record) => this.tokenOf(record),
      flush: () => this.writer.flush(),
      arm: (l) => this.arm(l),
    };
    this.concurrency = new ConcurrencyLimit(
      opts.maxSandboxesPerKey ?? opts.runtime.maxSandboxes,
      () => [...this.live.values()].filter((l) => l.record.state === "running").length,
    );
    this.createCtx = {
      runtime: opts.runtime,
      templates: opts.templates,
      pool: this.pool,
      tokenOf: (record) => this.tokenOf(record),
    };
  }

  /**
   * Loads the state file. Sandboxes recorded there lost their processes with
   * the previous service, so they all come back `paused` on their kept layer.
   */
  static async open(opts: SandboxManagerOptions): Promise<SandboxManager> {
    const m = new SandboxManager(opts);
    for (const record of await restoreRecords(opts.dataDir)) {
      m.live.set(record.sandboxID, newLive(record));
    }
    await m.writer.flush();
    await removeOrphans({
      dataDir: opts.dataDir,
      runtime: opts.runtime,
      isKnown: (id) => m.live.has(id),
      log: opts.log,
    });
    m.sampler = startSampling(m.metrics, () => m.live.values());
    // A deleted template or snapshot is never started ahead of time again.
    opts.templates.onLayerRelease?.((layerId) => m.pool.forgetLayer(layerId));
    const base = opts.templates.resolve(PRIMED_TEMPLATE);
    if (base) m.pool.prime(warmSpec(base, true));
    return m;
  }

  /** Ids of warm-pool members (started, not sandboxes of the API until a create claims one). */
  warmIds(): string[] {
    return this.pool.readyIds();
  }

  /** The access token of a secure sandbox. */
  tokenOf(record: SandboxRecord): string | undefined {
    return record.secure ? envdAccessToken(this.opts.tokenSecret, record.sandboxID) : undefined;
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
    await this.locked(sandboxID, async (l) => {
      const r = l.record;
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
      if (l.rt && r.state === "running") {
        await l.rt.setNetwork({ ...r.network, allowInternetAccess: r.allowInternetAccess });
      }
      await this.writer.flush();
    });
  }

  /**
   * Adds a line from the service (the egress edge) to a sandbox's log
   * (`GET /v2/sandboxes/:id/logs`); dropped when the sandbox is gone.
   */
  noteSandboxLog(sandboxID: string, message: string): void {
    const record = this.live.get(sandboxID)?.record;
    if (record) appendLog(record, "warn", message, { source: "egress-edge" });
  }

  /** A sandbox's record, when it is running or paused. */
  get(sandboxID: string): SandboxRecord | undefined {
    return this.live.get(sandboxID)?.record;
  }

  /** Every record. */
  all(): SandboxRecord[] {
    return [...this.live.values()].map((l) => l.record);
  }

  /** {@inheritDoc SandboxManagerView.exists} */
  exists(sandboxID: string): boolean {
    return this.live.has(sandboxID);
  }

  /** {@inheritDoc SandboxManagerView.isTemplateInUse} */
  isTemplateInUse(templateID: string): boolean {
    return this.all().some((r) => r.templateID === templateID);
  }

  /** The running, unfrozen runtime sandbox the proxy may talk to. */
  reachable(sandboxID: string): { record: SandboxRecord; rt: RuntimeSandbox } | undefined {
    const l = this.live.get(sandboxID);
    if (!l || l.gone || l.record.state !== "running" || !l.rt || l.frozen) return undefined;
    return { record: l.record, rt: l.rt };
  }

  /**
   * Registers a proxied exchange, cut when the sandbox stops being reachable.
   * Returns the function that unregisters it (call it when the exchange ends).
   */
  trackConnection(sandboxID: string, exchange: ProxiedExchange): () => void {
    const l = this.live.get(sandboxID);
    if (!l) {
      exchange.cut();
      return () => undefined;
    }
    return addConnection(l, exchange);
  }

  /** Creates a sandbox; all-or-nothing. */
  async create(input: CreateSandboxInput): Promise<SandboxRecord> {
    this.assertOpen();
    const release = this.concurrency.admit();
    let l: Live;
    try {
      const { record, rt } = await startSandbox(this.createCtx, input);
      l = newLive(record);
      attach(this.ctx, l, rt);
      this.live.set(record.sandboxID, l);
    } finally {
      release();
    }
    const record = l.record;
    this.arm(l);
    // The creation sample (metrics are never empty for a running sandbox) reads cgroups while the state file is written.
    await Promise.all([this.writer.flush(), sampleLive(this.metrics, l)]);
    return record;
  }

  /** {@inheritDoc SandboxManagerView.createFork} */
  async createFork(parentID: string, templateID: string, timeoutSec: number): Promise<object> {
    const parent = this.live.get(parentID)?.record;
    if (!parent) {
      throw serviceError(
        "not_found",
        `Sandbox "${parentID}" doesn't exist or you don't have access to it`,
      );
    }
    const record = await this.create(forkInput(parent, templateID, timeoutSec));
    return sandboxView(record, this.tokenOf(record), this.trafficTokenOf(record));
  }

  /** Kills a sandbox and deletes its writable layer. */
  async kill(sandboxID: string): Promise<void> {
    await this.locked(sandboxID, (l) => this.killLocked(l));
  }

  /** Pauses a running sandbox; `memory: false` stops its processes instead of freezing them. */
  async pause(sandboxID: string, memory: boolean): Promise<void> {
    await this.locked(sandboxID, async (l) => {
      if (l.record.state === "paused")
        throw serviceError("conflict", `Sandbox ${sandboxID} is already paused`);
      await pauseLocked(this.ctx, l, memory, "sandbox paused");
    });
  }

  /** Resumes a paused sandbox (409 when running). */
  async resume(sandboxID: string, timeoutSec: number): Promise<SandboxRecord> {
    return this.locked(sandboxID, async (l) => {
      if (l.record.state === "running")
        throw serviceError("conflict", `Sandbox ${sandboxID} is already running`);
      const release = this.concurrency.admit();
      try {
        await resumeLocked(this.ctx, l, timeoutSec);
      } finally {
        release();
      }
      return l.record;
    });
  }

  /** Connects: extends a running sandbox's end, or resumes a paused one. */
  async connect(
    sandboxID: string,
    timeoutSec: number | undefined,
  ): Promise<{ record: SandboxRecord; resumed: boolean }> {
    return this.locked(sandboxID, async (l) => {
      if (l.record.state === "running") {
        if (timeoutSec !== undefined) this.extendTo(l, Date.now() + timeoutSec * 1000);
        await this.writer.flush();
        return { record: l.record, resumed: false };
      }
      const release = this.concurrency.admit();
      try {
        await resumeLocked(this.ctx, l, timeoutSec ?? DEFAULT_CONNECT_TIMEOUT_SECONDS);
      } finally {
        release();
      }
      return { record: l.record, resumed: true };
    });
  }

  /** Overwrites a running sandbox's end: now + `timeoutSec` (may shorten). */
  async setTimeout(sandboxID: string, timeoutSec: number): Promise<void> {
    await this.locked(sandboxID, async (l) => {
      if (l.record.state !== "running")
        throw serviceError(
          "conflict",
          `Sandbox ${sandboxID} is not running (state '${l.record.state}'); resume it first`,
        );
      l.record.endAt = new Date(Date.now() + Math.max(0, timeoutSec) * 1000).toISOString();
      this.arm(l);
      await this.writer.flush();
    });
  }

  /** Extends a running sandbox's end to at least now + `durationSec`. */
  async refresh(sandboxID: string, durationSec: number): Promise<void> {
    await this.locked(sandboxID, async (l) => {
      if (l.record.state !== "running") return;
      this.extendTo(l, Date.now() + durationSec * 1000);
      await this.writer.flush();
    });
  }

  /** {@inheritDoc SandboxManagerView.runWhileFrozen} */
  async runWhileFrozen<T>(
    sandboxID: string,
    fn: (templateID: string, buildID?: string) => Promise<T>,
  ): Promise<T> {
    return this.locked(sandboxID, (l) =>
      whileFrozen(l, () => fn(l.record.templateID, l.record.buildID)),
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
    await stopForShutdown(this.live.values(), this.opts.log);
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

  private async locked<T>(sandboxID: string, fn: (l: Live) => Promise<T>): Promise<T> {
    this.assertOpen();
    const l = this.live.get(sandboxID);
    if (!l) throw notFound(sandboxID);
    return lockedEntry(l, async () => {
      if (l.gone) throw notFound(sandboxID);
      return fn(l);
    });
  }

  /** Stops `l`, forgets it and deletes its writable layer; the caller holds its lock. */
  private async killLocked(l: Live): Promise<void> {
    const id = l.record.sandboxID;
    await stopProcesses(l);
    l.gone = true;
    this.live.delete(id);
    this.metrics.drop(id);
    await this.writer.flush();
    await this.opts.runtime.destroy(id);
  }

  private arm(l: Live): void {
    arm(l, (expired) => void this.onTimeout(expired));
  }

  private extendTo(l: Live, endMs: number): void {
    extendTo(l, endMs, (expired) => void this.onTimeout(expired));
  }

  private async onTimeout(l: Live): Promise<void> {
    await expire(
      {
        pause: (x, reason, memory) => pauseLocked(this.ctx, x, memory, reason),
        kill: (x) => this.killLocked(x),
        log: this.opts.log,
      },
      l,
    );
  }
}
