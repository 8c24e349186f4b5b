/**
 * An in-process lock per key. Waiters queue behind the current holder in arrival order; a waiter
 * whose signal aborts leaves the queue without ever holding the lock.
 */
export interface KeyedLock {
  /** Resolves with the release function once the lock for key is held. */
  acquire(key: string, signal?: AbortSignal): Promise<() => void>
}

export function createKeyedLock(): KeyedLock {
  // The tail of each key's queue: it settles when the last waiter in line has released.
  const tails = new Map<string, Promise<void>>()

  return {
    async acquire(key, signal) {
      signal?.throwIfAborted()
      const previous = tails.get(key) ?? Promise.resolve()
      let open = () => {}
      const held = new Promise<void>((resolve) => {
        open = resolve
      })
      const tail = previous.then(() => held)
      tails.set(key, tail)
      // Dropped only when nobody queued behind us, so the map holds no entry for an idle key.
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key)
      })
      let released = false
      const release = () => {
        if (released) return
        released = true
        open()
      }
      try {
        await untilSettledOrAborted(previous, signal)
      } catch (error) {
        // Our place in the queue still passes the lock on to whoever waits behind us.
        release()
        throw error
      }
      return release
    },
  }
}

function untilSettledOrAborted(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort)
        // An abort that raced the hand-over still wins: the caller asked to stop.
        if (signal.aborted) reject(signal.reason)
        else resolve()
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
