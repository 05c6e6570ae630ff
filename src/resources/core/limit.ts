/**
 * Bounded concurrency: every fan-out over user input goes through this.
 *
 * @module
 */

/**
 * Runs `worker` over `items` with at most `concurrency` calls in flight and
 * returns the results in input order. The first failure stops new work and is
 * rethrown once the calls in flight have settled.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  concurrency: number,
  worker: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  async function lane(): Promise<void> {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await worker(items[index], index);
      } catch (error) {
        failure ??= { error };
      }
    }
  }
  const lanes = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane);
  await Promise.all(lanes);
  if (failure) throw failure.error;
  return results;
}
