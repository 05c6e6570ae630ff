/**
 * A sandbox's kill, by the API or at its timeout: its processes stop, the
 * manager forgets it, and its writable layer is deleted.
 *
 * @module
 */
import type { KnownSandbox } from "./known-sandbox";
import type { ManagerState } from "./manager-state";
import { stopProcesses } from "./pause-resume";

/** Stops `sandbox`, forgets it and deletes its writable layer; the caller holds its lock. */
export async function killLocked(state: ManagerState, sandbox: KnownSandbox): Promise<void> {
  const id = sandbox.record.sandboxID;
  await stopProcesses(sandbox);
  sandbox.gone = true;
  state.known.delete(id);
  state.metrics.drop(id);
  await state.writer.flush();
  // Its tokens open nothing any more once it is destroyed: the lifecycle forgets them.
  await state.lifecycle.destroy(id);
}
