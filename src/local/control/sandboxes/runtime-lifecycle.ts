/**
 * The runtime's start and destroy as the manager, the warm pool and create
 * use them, with what a destroy ends besides a sandbox's processes and
 * writable layer: its access tokens are no longer redacted
 * (`forgetSandboxTokens`, tokens.ts). Every destroy of the manager goes
 * through here (a kill, a pool member discarded without a claim, a create
 * that failed or gave its member back), so none keeps a dead sandbox's
 * tokens registered; the pool's discards did, two for every member a
 * long-running service ever dropped.
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";
import { forgetSandboxTokens } from "../tokens";

/** The part of the runtime that starts and destroys sandboxes. */
export type SandboxLifecycle = Pick<SandboxRuntime, "start" | "destroy">;

/**
 * `runtime`'s start and destroy (and the memory every sandbox shares, which
 * sizes the warm pool's share, and `setBackground`, which moves its members
 * out of a claimed sandbox's way), where a destroy that succeeded also forgets
 * the sandbox's tokens under `tokenSecret`. A failed destroy keeps them: its
 * sandbox may still run, and its token must never reach a log in clear.
 */
export function forgettingTokens(
  runtime: SandboxRuntime,
  tokenSecret: string,
): SandboxLifecycle & Pick<SandboxRuntime, "sandboxesMemoryBytes" | "setBackground"> {
  return {
    sandboxesMemoryBytes: runtime.sandboxesMemoryBytes,
    setBackground: (ids, on) => runtime.setBackground(ids, on),
    start: (spec) => runtime.start(spec),
    async destroy(sandboxID) {
      await runtime.destroy(sandboxID);
      forgetSandboxTokens(tokenSecret, sandboxID);
    },
  };
}
