/**
 * Bounded fan-out, so a stack with many resources never starts every step at
 * once (the engine's `--parallel` limit).
 *
 * @module
 */

/**
 * Runs `fn` over `items` with at most `limit` calls in flight and waits for
 * all of them; returns the errors thrown, in item order, instead of stopping
 * at the first one (the engine also lets running steps finish).
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<unknown[]> {
  const errors: Array<{ index: number; error: unknown }> = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      try {
        await fn(items[index]);
      } catch (error) {
        errors.push({ index, error });
      }
    }
  };
  // Bounded by `limit`: never more workers than that.
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return errors.sort((a, b) => a.index - b.index).map((e) => e.error);
}
