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
import * as path from "node:path";
import type { RuntimeSandbox } from "../../runtime/types";
import { ApiError } from "../http";
import { JsonStateWriter } from "../state-file";
import { envdAccessToken, trafficAccessToken } from "../tokens";
import { bootSandbox } from "./boot";
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
import { appendLog } from "./logs";
import type {
  CreateSandboxInput,
  SandboxManagerOptions,
  SandboxManagerView,
} from "./manager-contracts";
import { MetricsStore, METRICS_INTERVAL_MS } from "./metrics";
import { newSandboxRecord } from "./new-record";
import {
  attach,
  pauseLocked,
  resumeLocked,
  stopProcesses,
  type PauseResumeContext,
} from "./pause-resume";
import { sandboxView, type SandboxRecord } from "./record";
import { removeOrphans, restoreRecords, SANDBOXES_STATE_FILE } from "./restore";
import { DEFAULT_CONNECT_TIMEOUT_SECONDS } from "./schemas";
import { WarmPool } from "./warm-pool";
import { PRIMED_TEMPLATE, warmSpec, warmUpAgent } from "./warm-up";

export type {
  CreateSandboxInput,
  SandboxManagerOptions,
  TemplateLookup,
} from "./manager-contracts";
export { notFound } from "./live";
export { SANDBOXES_STATE_FILE } from "./restore";

/** Environment variables create sets per sandbox, never inherited by a fork. */
const OWN_ENV_KEYS = new Set(["E2B_SANDBOX", "E2B_SANDBOX_ID", "E2B_TEMPLATE_ID"]);

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

  private constructor(private readonly opts: SandboxManagerOptions) {
    this.pool = new WarmPool({
      runtime: opts.runtime,
      newId: newSandboxID,
      log: opts.log,
      warmUp: warmUpAgent,
      size: opts.warmPoolSize,
    });
    this.writer = new JsonStateWriter(path.join(opts.dataDir, SANDBOXES_STATE_FILE), () => ({
      version: 1,
      sandboxes: [...this.live.values()].map((l) => l.record),
    }));
    this.ctx = {
      runtime: opts.runtime,
      tokenOf: (record) => this.tokenOf(record),
      flush: () => this.writer.flush(),
      arm: (l) => this.arm(l),
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
    m.sampler = setInterval(() => void m.sampleAll(), METRICS_INTERVAL_MS);
    m.sampler.unref();
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
      r.network = { ...r.network, allowOut: update.allowOut, denyOut: update.denyOut };
      if (update.allowInternetAccess !== undefined)
        r.allowInternetAccess = update.allowInternetAccess;
      if (l.rt && r.state === "running") {
        await l.rt.setNetwork({ ...r.network, allowInternetAccess: r.allowInternetAccess });
      }
      await this.writer.flush();
    });
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
    const tpl = this.opts.templates.resolve(input.template);
    if (!tpl) throw new ApiError(404, `template '${input.template}' not found`);
    // Warm sandboxes started without mounts; a sandbox with volumes starts its own.
    const started = input.volumeMounts?.length
      ? undefined
      : this.pool.claim(warmSpec(tpl, input.allowInternetAccess));
    const sandboxID = started?.sandboxID ?? newSandboxID();
    const record = newSandboxRecord(sandboxID, tpl, input, Date.now());
    let rt: RuntimeSandbox;
    try {
      rt = await bootSandbox(record, {
        runtime: this.opts.runtime,
        token: this.tokenOf(record),
        readyCmd: tpl.readyCmd,
        started,
      });
    } catch (err) {
      await this.opts.runtime.destroy(sandboxID).catch(() => undefined);
      throw err;
    }
    record.endAt = new Date(Date.now() + input.timeoutSec * 1000).toISOString();
    appendLog(record, "info", "sandbox created", { templateID: tpl.templateID });
    const l = newLive(record);
    attach(this.ctx, l, rt);
    this.live.set(sandboxID, l);
    this.arm(l);
    this.opts.templates.markSpawned(tpl.templateID);
    // The creation sample (metrics are never empty for a running sandbox) reads cgroups while the state file is written.
    await Promise.all([this.writer.flush(), this.sample(l)]);
    return record;
  }

  /** {@inheritDoc SandboxManagerView.createFork} */
  async createFork(parentID: string, templateID: string, timeoutSec: number): Promise<object> {
    const parent = this.live.get(parentID)?.record;
    if (!parent) {
      throw new ApiError(404, `Sandbox "${parentID}" doesn't exist or you don't have access to it`);
    }
    const record = await this.create({
      template: templateID,
      timeoutSec,
      secure: parent.secure,
      allowInternetAccess: parent.allowInternetAccess,
      autoPause: parent.autoPause,
      autoResume: parent.autoResume,
      metadata: { ...parent.metadata },
      // The E2B_* variables name the sandbox itself; create sets the fork's own.
      envVars: Object.fromEntries(
        Object.entries(parent.initEnv).filter(([k]) => !OWN_ENV_KEYS.has(k)),
      ),
    });
    return sandboxView(record, this.tokenOf(record));
  }

  /** Kills a sandbox and deletes its writable layer. */
  async kill(sandboxID: string): Promise<void> {
    await this.locked(sandboxID, (l) => this.killLocked(l));
  }

  /** Pauses a running sandbox; `memory: false` stops its processes instead of freezing them. */
  async pause(sandboxID: string, memory: boolean): Promise<void> {
    await this.locked(sandboxID, async (l) => {
      if (l.record.state === "paused")
        throw new ApiError(409, `Sandbox ${sandboxID} is already paused`);
      await pauseLocked(this.ctx, l, memory, "sandbox paused");
    });
  }

  /** Resumes a paused sandbox (409 when running). */
  async resume(sandboxID: string, timeoutSec: number): Promise<SandboxRecord> {
    return this.locked(sandboxID, async (l) => {
      if (l.record.state === "running")
        throw new ApiError(409, `Sandbox ${sandboxID} is already running`);
      await resumeLocked(this.ctx, l, timeoutSec);
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
      await resumeLocked(this.ctx, l, timeoutSec ?? DEFAULT_CONNECT_TIMEOUT_SECONDS);
      return { record: l.record, resumed: true };
    });
  }

  /** Overwrites a running sandbox's end: now + `timeoutSec` (may shorten). */
  async setTimeout(sandboxID: string, timeoutSec: number): Promise<void> {
    await this.locked(sandboxID, async (l) => {
      if (l.record.state !== "running")
        throw new ApiError(
          409,
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
    return this.locked(sandboxID, async (l) => {
      const freeze = l.record.state === "running" && l.rt !== undefined && !l.frozen;
      if (freeze) await l.rt?.freeze();
      try {
        return await fn(l.record.templateID, l.record.buildID);
      } finally {
        if (freeze) await l.rt?.thaw();
      }
    });
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
    const now = new Date().toISOString();
    // Sequential on purpose: each stop unmounts and kills a cgroup; the number of sandboxes is unbounded.
    for (const l of this.live.values()) {
      await lockedEntry(l, async () => {
        await stopProcesses(l);
        if (l.record.state === "running") {
          l.record.state = "paused";
          l.record.endAt = now;
          appendLog(l.record, "info", "sandbox paused: the service stopped", {});
        }
      }).catch((err: unknown) =>
        this.opts.log(`stopping sandbox ${l.record.sandboxID} failed: ${String(err)}`),
      );
    }
    await this.writer.flush();
    await this.opts.runtime.close();
  }

  private assertOpen(): void {
    if (this.closed)
      throw new ApiError(503, "the local sandbox service is shutting down; start it again");
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
    const id = l.record.sandboxID;
    try {
      await lockedEntry(l, async () => {
        if (l.gone || l.record.state !== "running" || Date.parse(l.record.endAt) > Date.now())
          return;
        if (l.record.autoPause) {
          await pauseLocked(this.ctx, l, true, "sandbox paused: timeout reached");
          return;
        }
        appendLog(l.record, "info", "sandbox killed: timeout reached", {});
        await this.killLocked(l);
      });
    } catch (err) {
      this.opts.log(`timing out sandbox ${id} failed: ${String(err)}`);
    }
  }

  private async sampleAll(): Promise<void> {
    // Sequential: one cgroup read at a time is plenty every 5 s.
    for (const l of [...this.live.values()]) await this.sample(l);
  }

  private async sample(l: Live): Promise<void> {
    const rt = l.rt;
    if (!rt || l.frozen || l.record.state !== "running") return;
    try {
      this.metrics.add(l.record.sandboxID, await rt.stats());
    } catch {
      // A sandbox stopping between the check and the read has no stats; the next sample will tell.
    }
  }
}
