/**
 * The timeout of a running sandbox: a timer armed on the record's `endAt`,
 * re-armed when the end moves or lies beyond what a Node timer can hold.
 *
 * @module
 */
import type { KnownSandbox } from "./known-sandbox";

/** Node timers overflow above 2^31-1 ms; longer timeouts are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/** Calls `onExpired` once `sandbox.record.endAt` has passed (replacing any armed timer). */
export function arm(sandbox: KnownSandbox, onExpired: (sandbox: KnownSandbox) => void): void {
  disarm(sandbox);
  const delay = Math.max(0, Date.parse(sandbox.record.endAt) - Date.now());
  sandbox.timer = setTimeout(
    () => {
      sandbox.timer = undefined;
      if (Date.parse(sandbox.record.endAt) > Date.now()) return arm(sandbox, onExpired);
      onExpired(sandbox);
    },
    Math.min(delay, MAX_TIMER_MS),
  );
  sandbox.timer.unref();
}

/** Cancels the armed timer of `sandbox`, if any. */
export function disarm(sandbox: KnownSandbox): void {
  if (sandbox.timer) clearTimeout(sandbox.timer);
  sandbox.timer = undefined;
}

/** Moves the end of `sandbox` to `endMs` when that is later (never shortens). */
export function extendTo(
  sandbox: KnownSandbox,
  endMs: number,
  onExpired: (sandbox: KnownSandbox) => void,
): void {
  if (endMs > Date.parse(sandbox.record.endAt)) {
    sandbox.record.endAt = new Date(endMs).toISOString();
    arm(sandbox, onExpired);
  }
}
