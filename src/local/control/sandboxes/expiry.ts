/**
 * What happens when a running sandbox's end is reached: paused when it asked
 * for auto-pause (its memory kept, or filesystem-only when it asked for
 * `autoPauseMemory: false`), killed otherwise.
 *
 * @module
 */
import { lockedEntry, type Live } from "./known-sandbox";
import { appendLog } from "./logs";

/** The state changes an expiry may make; both run under the sandbox's lock. */
export interface ExpiryContext {
  /** Pauses `l`, with its memory when `memory` (else filesystem-only), logging `reason`. */
  pause(l: Live, reason: string, memory: boolean): Promise<void>;
  /** Kills `l` and deletes its writable layer. */
  kill(l: Live): Promise<void>;
  log(line: string): void;
}

/**
 * Ends `l` if it still runs and its end has passed (a connect or refresh may
 * have moved it while the timer fired). Failures are logged, not thrown: no
 * caller waits for a timer.
 */
export async function expire(ctx: ExpiryContext, l: Live): Promise<void> {
  try {
    await lockedEntry(l, async () => {
      if (l.gone || l.record.state !== "running" || Date.parse(l.record.endAt) > Date.now()) return;
      if (l.record.autoPause) {
        // Filesystem-only, the next connect boots again, as after `pause` with `memory: false`.
        const memory = l.record.autoPauseMemory !== false;
        await ctx.pause(l, "sandbox paused: timeout reached", memory);
        return;
      }
      appendLog(l.record, "info", "sandbox killed: timeout reached", {});
      await ctx.kill(l);
    });
  } catch (err) {
    ctx.log(`timing out sandbox ${l.record.sandboxID} failed: ${String(err)}`);
  }
}
