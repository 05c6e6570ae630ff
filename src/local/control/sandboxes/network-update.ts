/**
 * A sandbox's network update (`PUT /sandboxes/:sandboxID/network`): its outbound
 * rules and internet access replaced on the record, and applied at once when
 * it runs, at its next start when paused.
 *
 * @module
 */
import { locked } from "./manager-lock";
import type { ManagerState } from "./manager-state";
import type { NetworkUpdate } from "./network";

/**
 * Replaces a sandbox's outbound rules (and, when given, its internet
 * access): at once when it runs, at its next start when paused.
 */
export async function updateNetwork(
  state: ManagerState,
  sandboxID: string,
  update: NetworkUpdate,
): Promise<void> {
  await locked(state, sandboxID, async (sandbox) => {
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
    await state.writer.flush();
  });
}
