/**
 * The one way tests wait for something that happens in the background: poll
 * until it holds, with a deadline, never a fixed sleep before an assertion.
 */

/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /**
   * How long to keep trying before failing.
   * @default 20_000
   */
  timeoutMs?: number | undefined;
  /**
   * The pause between two tries.
   * @default 100
   */
  intervalMs?: number | undefined;
}

/**
 * Calls `probe` until it returns anything but `false`, and returns that value:
 * `await eventually(async () => (await list()).length === 2)`, or
 * `const name = await eventually(() => names().find(isPartial) ?? false)`.
 * An error thrown by `probe` ends the wait at once (a build that failed will
 * not turn ready: no point waiting out the deadline). After `timeoutMs` it
 * fails with an error naming the deadline; assert on the state afterwards
 * for a precise message.
 */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  opts: EventuallyOptions = {},
): Promise<Exclude<T, false>> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const intervalMs = opts.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== false) return value as Exclude<T, false>;
    if (Date.now() >= deadline) {
      throw new Error(`eventually: the condition was still false after ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
