/** Rejects with the signal's reason once it aborts (after killing the work through `controller`). */
export function deadline(signal: AbortSignal, controller: AbortController): { reached: Promise<never>; clear(): void } {
  let onAbort = () => {}
  const reached = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      controller.abort(signal.reason)
      reject(signal.reason)
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  reached.catch(() => {})
  return { reached, clear: () => signal.removeEventListener('abort', onAbort) }
}
