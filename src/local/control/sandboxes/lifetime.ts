/**
 * The timeout of a running sandbox: a timer armed on the record's `endAt`,
 * re-armed when the end moves or lies beyond what a Node timer can hold.
 *
 * @module
 */
import type { Live } from "./known-sandbox";

/** Node timers overflow above 2^31-1 ms; longer timeouts are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/** Calls `onExpired` once `l.record.endAt` has passed (replacing any armed timer). */
export function arm(l: Live, onExpired: (l: Live) => void): void {
  disarm(l);
  const delay = Math.max(0, Date.parse(l.record.endAt) - Date.now());
  l.timer = setTimeout(
    () => {
      l.timer = undefined;
      if (Date.parse(l.record.endAt) > Date.now()) return arm(l, onExpired);
      onExpired(l);
    },
    Math.min(delay, MAX_TIMER_MS),
  );
  l.timer.unref();
}

/** Cancels the armed timer of `l`, if any. */
export function disarm(l: Live): void {
  if (l.timer) clearTimeout(l.timer);
  l.timer = undefined;
}

/** Moves the end of `l` to `endMs` when that is later (never shortens). */
export function extendTo(l: Live, endMs: number, onExpired: (l: Live) => void): void {
  if (endMs > Date.parse(l.record.endAt)) {
    l.record.endAt = new Date(endMs).toISOString();
    arm(l, onExpired);
  }
}
