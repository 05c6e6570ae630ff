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
import * as fs from "node:fs/promises";
import * as path from "node:path";
import type { Duplex } from "node:stream";
import { SandboxIacError } from "../../../errors";
import { SANDBOXES_DIR } from "../../runtime/constants";
import type { RuntimeSandbox, SandboxRuntime } from "../../runtime/types";
import { agentRun } from "../agent-client";
import { ApiError } from "../http";
import { JsonStateWriter, readJsonFile } from "../state-file";
import { envdAccessToken } from "../tokens";
import { bootSandbox } from "./boot";
import { newClientID, newSandboxID } from "./ids";
import { appendLog } from "./logs";
import { MetricsStore, METRICS_INTERVAL_MS } from "./metrics";
import type { SandboxRecord } from "./record";
import { DEFAULT_CONNECT_TIMEOUT_SECONDS } from "./schemas";
import { WarmPool, type WarmSpec } from "./warm-pool";

/** What the templates side may ask of the sandboxes side. */
export interface SandboxManagerView {
  /** True when the sandbox is running or paused. */
  exists(sandboxID: string): boolean;
  /**
   * Pauses its processes (if running) around `fn`; `fn` gets the sandbox's
   * templateID and the build it started from; ApiError 404 when unknown.
   */
  runWhileFrozen<T>(
    sandboxID: string,
    fn: (templateID: string, buildID?: string) => Promise<T>,
  ): Promise<T>;
  /** True when a running or paused sandbox uses the template. */
  isTemplateInUse(templateID: string): boolean;
}

/** The part of the template registry the manager uses (see templates/registry.ts). */
export interface TemplateLookup {
  resolve(idOrName: string):
    | {
        templateID: string;
        buildID?: string | undefined;
        alias?: string | undefined;
        layers: string[];
        envs: Record<string, string>;
        defaultUser: string;
        defaultWorkdir?: string | undefined;
        startCmd?: string | undefined;
        readyCmd?: string | undefined;
        cpuCount: number;
        memoryMB: number;
        diskSizeMB: number;
        envdVersion: string;
      }
    | undefined;
  markSpawned(templateID: string): void;
}

/** What a new sandbox is asked to be. */
export interface CreateSandboxInput {
  template: string;
  timeoutSec: number;
  secure: boolean;
  allowInternetAccess: boolean;
  autoPause: boolean;
  autoResume: boolean;
  metadata: Record<string, string>;
  envVars: Record<string, string>;
}

/** Options of {@link SandboxManager.open}. */
export interface SandboxManagerOptions {
  dataDir: string;
  runtime: SandboxRuntime;
  templates: TemplateLookup;
  /** The secret that derives access tokens. */
  tokenSecret: string;
  log: (line: string) => void;
  /**
   * Sandboxes kept started ahead per (template layers, CPU, memory, network),
   * claimed by create; 0 disables the warm pool. The `base` template is kept
   * warm from the start, other templates once created from.
   * @default 2
   */
  warmPoolSize?: number;
}

interface Live {
  record: SandboxRecord;
  rt: RuntimeSandbox | undefined;
  frozen: boolean;
  timer: NodeJS.Timeout | undefined;
  connections: Set<Duplex>;
  lock: Promise<void>;
  gone: boolean;
}

/** Relative path of the state file in the data dir. */
export const SANDBOXES_STATE_FILE = path.join("control", "sandboxes.json");
/** Node timers overflow above 2^31-1 ms; longer timeouts are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;
/** Sandbox ids as create makes them (ids.ts); build sandboxes use another prefix. */
const SANDBOX_DIR_PATTERN = /^i[a-z0-9]{20}$/;
/** How long a pool member's warm-up command may take. */
const WARM_UP_TIMEOUT_MS = 10_000;
/** The template kept warm from the start. */
const PRIMED_TEMPLATE = "base";

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

  private constructor(private readonly opts: SandboxManagerOptions) {
    this.pool = new WarmPool({
      runtime: opts.runtime,
      newId: newSandboxID,
      log: opts.log,
      warmUp: warmUpAgent,
      ...(opts.warmPoolSize !== undefined ? { size: opts.warmPoolSize } : {}),
    });
    this.writer = new JsonStateWriter(path.join(opts.dataDir, SANDBOXES_STATE_FILE), () => ({
      version: 1,
      sandboxes: [...this.live.values()].map((l) => l.record),
    }));
  }

  /**
   * Loads the state file. Sandboxes recorded there lost their processes with
   * the previous service, so they all come back `paused` on their kept layer.
   */
  static async open(opts: SandboxManagerOptions): Promise<SandboxManager> {
    const m = new SandboxManager(opts);
    const state = (await readJsonFile(path.join(opts.dataDir, SANDBOXES_STATE_FILE))) as
      { sandboxes?: SandboxRecord[] } | undefined;
    const now = new Date().toISOString();
    for (const record of state?.sandboxes ?? []) {
      if (record.state === "running") {
        record.state = "paused";
        record.endAt = now;
        appendLog(record, "info", "sandbox paused: the service restarted", {});
      }
      m.live.set(record.sandboxID, m.newLive(record));
    }
    await m.writer.flush();
    await m.removeOrphans();
    m.sampler = setInterval(() => void m.sampleAll(), METRICS_INTERVAL_MS);
    m.sampler.unref();
    const base = opts.templates.resolve(PRIMED_TEMPLATE);
    if (base) m.pool.prime(warmSpec(base, true));
    return m;
  }

  /**
   * Deletes writable layers of sandboxes the state file does not know: warm
   * pool members and creates that never answered when the previous service
   * died. Neither was ever handed to a caller.
   */
  private async removeOrphans(): Promise<void> {
    let names: string[];
    try {
      names = await fs.readdir(path.join(this.opts.dataDir, SANDBOXES_DIR));
    } catch {
      return;
    }
    // Sequential: usually none or a couple (the pool's size).
    for (const name of names) {
      if (!SANDBOX_DIR_PATTERN.test(name) || this.live.has(name)) continue;
      await this.opts.runtime
        .destroy(name)
        .catch((err: unknown) =>
          this.opts.log(`removing orphaned sandbox ${name} failed: ${String(err)}`),
        );
    }
  }

  /** Ids of warm-pool members (started, not sandboxes of the API until a create claims one). */
  warmIds(): string[] {
    return this.pool.readyIds();
  }

  private newLive(record: SandboxRecord): Live {
    return {
      record,
      rt: undefined,
      frozen: false,
      timer: undefined,
      connections: new Set(),
      lock: Promise.resolve(),
      gone: false,
    };
  }

  /** The access token of a secure sandbox. */
  tokenOf(record: SandboxRecord): string | undefined {
    return record.secure ? envdAccessToken(this.opts.tokenSecret, record.sandboxID) : undefined;
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
   * Registers a proxied connection, destroyed abruptly when the sandbox stops
   * being reachable. Returns the function that unregisters it (call it when the
   * proxied exchange ends, as the client socket may be reused).
   */
  trackConnection(sandboxID: string, socket: Duplex): () => void {
    const l = this.live.get(sandboxID);
    if (!l) {
      socket.destroy();
      return () => undefined;
    }
    l.connections.add(socket);
    const untrack = (): void => void l.connections.delete(socket);
    socket.once("close", untrack);
    return () => {
      socket.off("close", untrack);
      untrack();
    };
  }

  /** Creates a sandbox; all-or-nothing. */
  async create(input: CreateSandboxInput): Promise<SandboxRecord> {
    this.assertOpen();
    const tpl = this.opts.templates.resolve(input.template);
    if (!tpl) throw new ApiError(404, `template '${input.template}' not found`);
    const started = this.pool.claim(warmSpec(tpl, input.allowInternetAccess));
    const sandboxID = started?.sandboxId ?? newSandboxID();
    const now = Date.now();
    const record: SandboxRecord = {
      sandboxID,
      templateID: tpl.templateID,
      buildID: tpl.buildID,
      alias: tpl.alias,
      clientID: newClientID(),
      startedAt: new Date(now).toISOString(),
      endAt: new Date(now + input.timeoutSec * 1000).toISOString(),
      state: "running",
      cpuCount: tpl.cpuCount,
      memoryMB: tpl.memoryMB,
      diskSizeMB: tpl.diskSizeMB,
      envdVersion: tpl.envdVersion,
      secure: input.secure,
      allowInternetAccess: input.allowInternetAccess,
      autoPause: input.autoPause,
      autoResume: input.autoResume,
      metadata: input.metadata,
      initEnv: {
        ...tpl.envs,
        ...input.envVars,
        E2B_SANDBOX: "true",
        E2B_SANDBOX_ID: sandboxID,
        E2B_TEMPLATE_ID: tpl.templateID,
      },
      layers: tpl.layers,
      defaultUser: tpl.defaultUser,
      defaultWorkdir: tpl.defaultWorkdir,
      startCmd: tpl.startCmd,
      logs: [],
    };
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
    const l = this.newLive(record);
    this.attach(l, rt);
    this.live.set(sandboxID, l);
    this.arm(l);
    this.opts.templates.markSpawned(tpl.templateID);
    // The creation sample (metrics are never empty for a running sandbox) reads cgroups while the state file is written.
    await Promise.all([this.writer.flush(), this.sample(l)]);
    return record;
  }

  /** Kills a sandbox and deletes its writable layer. */
  async kill(sandboxID: string): Promise<void> {
    await this.locked(sandboxID, async (l) => {
      await this.stopProcesses(l);
      l.gone = true;
      this.live.delete(sandboxID);
      this.metrics.drop(sandboxID);
      await this.writer.flush();
      await this.opts.runtime.destroy(sandboxID);
    });
  }

  /** Pauses a running sandbox; `memory: false` stops its processes instead of freezing them. */
  async pause(sandboxID: string, memory: boolean): Promise<void> {
    await this.locked(sandboxID, async (l) => {
      if (l.record.state === "paused")
        throw new ApiError(409, `Sandbox ${sandboxID} is already paused`);
      await this.pauseLocked(l, memory, "sandbox paused");
    });
  }

  /** Resumes a paused sandbox (409 when running). */
  async resume(sandboxID: string, timeoutSec: number): Promise<SandboxRecord> {
    return this.locked(sandboxID, async (l) => {
      if (l.record.state === "running")
        throw new ApiError(409, `Sandbox ${sandboxID} is already running`);
      await this.resumeLocked(l, timeoutSec);
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
      await this.resumeLocked(l, timeoutSec ?? DEFAULT_CONNECT_TIMEOUT_SECONDS);
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
      await this.lockedEntry(l, async () => {
        await this.stopProcesses(l);
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
    return this.lockedEntry(l, async () => {
      if (l.gone) throw notFound(sandboxID);
      return fn(l);
    });
  }

  private async lockedEntry<T>(l: Live, fn: () => Promise<T>): Promise<T> {
    const prev = l.lock;
    let release!: () => void;
    l.lock = new Promise<void>((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private attach(l: Live, rt: RuntimeSandbox): void {
    l.rt = rt;
    l.frozen = false;
    // A sandbox whose init dies on its own (OOM, crash) keeps its layer: report it paused.
    void rt.exited.then(() => {
      if (l.rt !== rt || l.gone) return;
      l.rt = undefined;
      this.dropConnections(l);
      if (l.record.state === "running") {
        l.record.state = "paused";
        l.record.endAt = new Date().toISOString();
        appendLog(l.record, "warn", "sandbox processes exited unexpectedly; sandbox paused", {});
        this.disarm(l);
        void this.writer.flush().catch(() => undefined);
      }
    });
  }

  private async stopProcesses(l: Live): Promise<void> {
    this.disarm(l);
    this.dropConnections(l);
    const rt = l.rt;
    l.rt = undefined;
    if (!rt) return;
    // Frozen tasks cannot die until thawed.
    if (l.frozen) await rt.thaw().catch(() => undefined);
    l.frozen = false;
    await rt.stop();
  }

  private async pauseLocked(l: Live, memory: boolean, message: string): Promise<void> {
    this.disarm(l);
    this.dropConnections(l);
    if (memory && l.rt) {
      await l.rt.freeze();
      l.frozen = true;
    } else await this.stopProcesses(l);
    l.record.state = "paused";
    l.record.endAt = new Date().toISOString();
    appendLog(l.record, "info", message, {});
    await this.writer.flush();
  }

  private async resumeLocked(l: Live, timeoutSec: number): Promise<void> {
    if (l.rt && l.frozen) {
      await l.rt.thaw();
      l.frozen = false;
    } else {
      const rt = await bootSandbox(l.record, {
        runtime: this.opts.runtime,
        token: this.tokenOf(l.record),
      });
      this.attach(l, rt);
    }
    const now = Date.now();
    l.record.state = "running";
    l.record.startedAt = new Date(now).toISOString();
    l.record.endAt = new Date(now + timeoutSec * 1000).toISOString();
    appendLog(l.record, "info", "sandbox resumed", {});
    this.arm(l);
    await this.writer.flush();
  }

  private extendTo(l: Live, endMs: number): void {
    if (endMs > Date.parse(l.record.endAt)) {
      l.record.endAt = new Date(endMs).toISOString();
      this.arm(l);
    }
  }

  private arm(l: Live): void {
    this.disarm(l);
    const delay = Math.max(0, Date.parse(l.record.endAt) - Date.now());
    l.timer = setTimeout(
      () => {
        l.timer = undefined;
        if (Date.parse(l.record.endAt) > Date.now()) return this.arm(l);
        void this.onTimeout(l);
      },
      Math.min(delay, MAX_TIMER_MS),
    );
    l.timer.unref();
  }

  private disarm(l: Live): void {
    if (l.timer) clearTimeout(l.timer);
    l.timer = undefined;
  }

  private async onTimeout(l: Live): Promise<void> {
    const id = l.record.sandboxID;
    try {
      await this.lockedEntry(l, async () => {
        if (l.gone || l.record.state !== "running" || Date.parse(l.record.endAt) > Date.now())
          return;
        if (l.record.autoPause) {
          await this.pauseLocked(l, true, "sandbox paused: timeout reached");
          return;
        }
        appendLog(l.record, "info", "sandbox killed: timeout reached", {});
        await this.stopProcesses(l);
        l.gone = true;
        this.live.delete(id);
        this.metrics.drop(id);
        await this.writer.flush();
        await this.opts.runtime.destroy(id);
      });
    } catch (err) {
      this.opts.log(`timing out sandbox ${id} failed: ${String(err)}`);
    }
  }

  private dropConnections(l: Live): void {
    // Abrupt on purpose: the SDK must see a broken stream, not a clean end.
    for (const s of l.connections) s.destroy();
    l.connections.clear();
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

/** Runs what a create's first command runs (`bash -l -c true`), so that its code paths are compiled and cached. */
async function warmUpAgent(rt: RuntimeSandbox): Promise<void> {
  const res = await agentRun(rt.agentSocket, "true", { timeoutMs: WARM_UP_TIMEOUT_MS });
  if (res.exitCode !== 0) {
    throw new SandboxIacError(
      "command_failed",
      `warming up pool sandbox ${rt.sandboxId}: \`bash -l -c true\` exited with ${res.exitCode} (stderr: ${res.stderr.slice(-200) || "none"}); check the template's /etc/profile`,
      {
        operation: "sandboxes.warmPool",
        resourceId: rt.sandboxId,
      },
    );
  }
}

/** The warm-pool key fields of a template and a network choice. */
function warmSpec(
  tpl: { layers: string[]; cpuCount: number; memoryMB: number },
  allowInternetAccess: boolean,
): WarmSpec {
  return {
    layers: tpl.layers,
    cpuCount: tpl.cpuCount,
    memoryMB: tpl.memoryMB,
    allowInternetAccess,
  };
}

/** The 404 of an unknown sandbox (wire-protocol.md 3). */
export function notFound(sandboxID: string): ApiError {
  return new ApiError(404, `Sandbox "${sandboxID}" doesn't exist or you don't have access to it`);
}
