/**
 * A scenario split into phases that share state: each phase is its own `it`,
 * so a failure names its phase, and a phase after a failed one fails at once
 * naming the phase that broke, instead of running on a half-made state.
 */

/** Declares phases in order with the returned function, inside a `describe`. */
export function phases(): (name: string, fn: () => Promise<void>, timeoutMs?: number) => void {
  let broken: string | undefined;
  return (name, fn, timeoutMs) => {
    it(
      name,
      async () => {
        if (broken !== undefined) {
          throw new Error(`not run: the earlier phase "${broken}" failed`);
        }
        try {
          await fn();
        } catch (err) {
          broken = name;
          throw err;
        }
      },
      timeoutMs,
    );
  };
}
