/**
 * `load` run on the first call and its promise kept for every later one: a module imported on first
 * use (so a cold start does not compile it), a folder made once. A failure is not kept: the next call
 * runs `load` again.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined
      throw error
    })
    return loading
  }
}
