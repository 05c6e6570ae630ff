/**
 * The manager's side of a create: admitted under the team's limit, started
 * (create.ts), then known, its timeout armed, its first metrics sample begun
 * and the state file written before the route answers.
 *
 * @module
 */
import type { CreateSandboxInput } from "./create-input";
import { startSandbox } from "./create";
import { newKnownSandbox, type KnownSandbox } from "./known-sandbox";
import { assertOpen } from "./manager-lock";
import type { ManagerState } from "./manager-state";
import { attach } from "./pause-resume";
import type { SandboxRecord } from "./record";
import { sampleSandbox } from "./sampler";
import { armEnd } from "./timeouts";

/** Creates a sandbox; all-or-nothing. */
export async function createSandbox(
  state: ManagerState,
  input: CreateSandboxInput,
): Promise<SandboxRecord> {
  assertOpen(state);
  const release = state.concurrency.admit();
  let sandbox: KnownSandbox;
  let phases: string;
  try {
    const started = await startSandbox(state.createCtx, input);
    const { record, processes } = started;
    phases = started.phases;
    sandbox = newKnownSandbox(record);
    attach(state.ctx, sandbox, processes);
    state.known.set(record.sandboxID, sandbox);
  } finally {
    release();
  }
  const record = sandbox.record;
  armEnd(state, sandbox);
  // The creation sample (metrics are never empty for a running sandbox: their readers wait
  // for it) is not waited for: its cgroup reads took as long as the state file's write.
  state.metrics.firstSample(record.sandboxID, sampleSandbox(state.metrics, sandbox));
  const t0 = performance.now();
  await state.writer.flush();
  // Where a create's time went on the service (bench/local.js prints the loop's from its log).
  state.opts.log(
    `sandbox ${record.sandboxID}: created, ${phases}, state ${(performance.now() - t0).toFixed(0)} ms`,
  );
  return record;
}
