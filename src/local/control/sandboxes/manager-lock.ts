/**
 * The lock every state change of one sandbox takes (its `KnownSandbox`'s), and
 * the refusal of every state change once the manager is closing.
 *
 * @module
 */
import { serviceError } from "../http";
import { lockedEntry, notFound, type KnownSandbox } from "./known-sandbox";
import type { ManagerState } from "./manager-state";

/** Refuses every state change once the manager is closing. */
export function assertOpen(state: ManagerState): void {
  if (state.closed)
    throw serviceError("unavailable", "the local sandbox service is shutting down; start it again");
}

/** Runs `fn` under the lock of the sandbox `sandboxID` (404 when unknown or gone). */
export async function locked<T>(
  state: ManagerState,
  sandboxID: string,
  fn: (sandbox: KnownSandbox) => Promise<T>,
): Promise<T> {
  assertOpen(state);
  const sandbox = state.known.get(sandboxID);
  if (!sandbox) throw notFound(sandboxID);
  return lockedEntry(sandbox, async () => {
    if (sandbox.gone) throw notFound(sandboxID);
    return fn(sandbox);
  });
}
