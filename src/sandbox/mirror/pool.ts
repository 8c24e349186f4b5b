/**
 * Runs worker over items with at most `limit` in flight. After the first failure no new item starts,
 * but the ones already running are awaited before the error is thrown: callers record what landed
 * (in the manifest) only once nothing is still writing.
 */
export async function runPool<T>(
  items: readonly T[],
  limit: number,
  worker: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  let failure: { error: unknown } | undefined
  async function lane(): Promise<void> {
    while (!failure && next < items.length) {
      const item = items[next++] as T
      try {
        await worker(item)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  if (failure) throw failure.error
}
