/**
 * Makes the sandbox manager's state ({@link ManagerState}) and restores it
 * from the state file at open: the warm pool and its warm-up, the state
 * file's writer, the contexts of its state changes, the sampler, and the
 * template kept warm from the start.
 *
 * @module
 */
import { ConcurrencyLimit } from "./concurrency";
import { newSandboxID } from "./ids";
import { newKnownSandbox, type KnownSandbox } from "./known-sandbox";
import type { SandboxManagerOptions } from "./manager-options";
import type { ManagerState } from "./manager-state";
import { MetricsStore } from "./metrics";
import { PreInits } from "./pre-init";
import { removeOrphans, restoreRecords, sandboxesStateWriter } from "./restore";
import { forgettingTokens } from "./runtime-lifecycle";
import { startSampling } from "./sampler";
import { tokenOf } from "./sandbox-tokens";
import { armEnd } from "./timeouts";
import { WarmPool } from "./warm-pool";
import { PRIMED_TEMPLATE, warmSpec, warmUpAgent } from "./warm-up";

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
