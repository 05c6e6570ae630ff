/**
 * What the sandbox manager holds (the sandboxes it knows, the state file's
 * writer, the warm pool, the team's limit, the contexts of its state
 * changes), and how it is made and restored from the state file at open.
 *
 * @module
 */
import type { JsonStateWriter } from "../state-file";
import { ConcurrencyLimit } from "./concurrency";
import type { CreateContext } from "./create";
import { newSandboxID } from "./ids";
import { newKnownSandbox, type KnownSandbox } from "./known-sandbox";
import type { SandboxManagerOptions } from "./manager-options";
import { MetricsStore } from "./metrics";
import type { PauseResumeContext } from "./pause-resume";
import { PreInits } from "./pre-init";
import { removeOrphans, restoreRecords, sandboxesStateWriter } from "./restore";
import { forgettingTokens, type SandboxLifecycle } from "./runtime-lifecycle";
import { startSampling } from "./sampler";
import { tokenOf } from "./sandbox-tokens";
import { armEnd } from "./timeouts";
import { WarmPool } from "./warm-pool";
import { PRIMED_TEMPLATE, warmSpec, warmUpAgent } from "./warm-up";

/** Everything a `SandboxManager` holds, shared by the functions of its state changes. */
export interface ManagerState {
  readonly opts: SandboxManagerOptions;
  /** Resource samples of running sandboxes. */
  readonly metrics: MetricsStore;
  readonly known: Map<string, KnownSandbox>;
  readonly writer: JsonStateWriter;
  sampler: NodeJS.Timeout | undefined;
  closed: boolean;
  /** Started sandboxes waiting for a create; never part of `known`. */
  readonly pool: WarmPool;
  /** The `/init` each warm key's members get during their warm-up. */
  readonly preInits: PreInits;
  /** What the pause/resume state changes need of the manager. */
  readonly ctx: PauseResumeContext;
  /** What create needs of the manager. */
  readonly createCtx: CreateContext;
  /** Sandboxes whose first proxied exchange ended (the pool's refill waits for it). */
  readonly exchanged: WeakSet<KnownSandbox>;
  /** The team's concurrent-sandbox limit (the service has one API key, so one team). */
  readonly concurrency: ConcurrencyLimit;
  /** Every start and destroy of a sandbox the manager makes: a destroy also forgets its tokens. */
  readonly lifecycle: SandboxLifecycle;
}

function newManagerState(opts: SandboxManagerOptions): ManagerState {
  const lifecycle = forgettingTokens(opts.runtime, opts.tokenSecret);
  const preInits = new PreInits();
  const known = new Map<string, KnownSandbox>();
  const pool = new WarmPool({
    runtime: lifecycle,
    newId: newSandboxID,
    log: opts.log,
    warmUp: async (processes, spec) => {
      await warmUpAgent(processes);
      await preInits.send(processes, spec);
    },
    size: opts.warmPoolSize,
  });
  const writer = sandboxesStateWriter(opts.dataDir, () =>
    [...known.values()].map((sandbox) => sandbox.record),
  );
  const state: ManagerState = {
    opts,
    metrics: new MetricsStore(),
    known,
    writer,
    sampler: undefined,
    closed: false,
    pool,
    preInits,
    ctx: {
      runtime: opts.runtime,
      tokenOf: (record) => tokenOf(opts.tokenSecret, record),
      flush: () => writer.flush(),
      arm: (sandbox) => armEnd(state, sandbox),
    },
    createCtx: {
      runtime: lifecycle,
      templates: opts.templates,
      pool,
      preInits,
      tokenOf: (record) => tokenOf(opts.tokenSecret, record),
    },
    exchanged: new WeakSet(),
    concurrency: new ConcurrencyLimit(
      opts.maxSandboxesPerKey ?? opts.runtime.maxSandboxes,
      () => [...known.values()].filter((sandbox) => sandbox.record.state === "running").length,
    ),
    lifecycle,
  };
  return state;
}

/**
 * Makes the manager's state and loads the state file. Sandboxes recorded
 * there lost their processes with the previous service, so they all come
 * back `paused` on their kept layer.
 */
export async function openManagerState(opts: SandboxManagerOptions): Promise<ManagerState> {
  const state = newManagerState(opts);
  for (const record of await restoreRecords(opts.dataDir)) {
    state.known.set(record.sandboxID, newKnownSandbox(record));
  }
  await state.writer.flush();
  await removeOrphans({
    dataDir: opts.dataDir,
    runtime: opts.runtime,
    isKnown: (id) => state.known.has(id),
    log: opts.log,
  });
  state.sampler = startSampling(state.metrics, () => state.known.values());
  // A deleted template or snapshot is never started ahead of time again.
  opts.templates.onLayerRelease?.((layerId) => state.pool.forgetLayer(layerId));
  const base = opts.templates.resolve(PRIMED_TEMPLATE);
  if (base) state.pool.prime(warmSpec(base, true));
  return state;
}
