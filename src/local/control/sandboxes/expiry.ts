/**
 * What happens when a running sandbox's end is reached: paused when it asked
 * for auto-pause (its memory kept, or filesystem-only when it asked for
 * `autoPauseMemory: false`), killed otherwise.
 *
 * @module
 */
import { lockedEntry, type KnownSandbox } from "./known-sandbox";
import { appendLog } from "./logs";

/** The state changes an expiry may make; both run under the sandbox's lock. */
export interface ExpiryContext {
  /** Pauses `sandbox`, with its memory when `memory` (else filesystem-only), logging `reason`. */
  pause(sandbox: KnownSandbox, reason: string, memory: boolean): Promise<void>;
  /** Kills `sandbox` and deletes its writable layer. */
  kill(sandbox: KnownSandbox): Promise<void>;
  log(line: string): void;
}

/**
 * Ends `sandbox` if it still runs and its end has passed (a connect or refresh may
 * have moved it while the timer fired). Failures are logged, not thrown: no
 * caller waits for a timer.
 */
export async function expire(ctx: ExpiryContext, sandbox: KnownSandbox): Promise<void> {
  try {
    await lockedEntry(sandbox, async () => {
      if (
        sandbox.gone ||
        sandbox.record.state !== "running" ||
        Date.parse(sandbox.record.endAt) > Date.now()
      )
        return;
      if (sandbox.record.autoPause) {
        // Filesystem-only, the next connect boots again, as after `pause` with `memory: false`.
        const memory = sandbox.record.autoPauseMemory !== false;
        await ctx.pause(sandbox, "sandbox paused: timeout reached", memory);
        return;
      }
      appendLog(sandbox.record, "info", "sandbox killed: timeout reached", {});
      await ctx.kill(sandbox);
    });
  } catch (err) {
    ctx.log(`timing out sandbox ${sandbox.record.sandboxID} failed: ${String(err)}`);
  }
}
