import { ToolError } from '../core/errors'

export interface Limiter {
  /** Waits for a slot; rejects with rate_limited at once when the queue is full. */
  acquire(signal: AbortSignal): Promise<() => void>
  readonly active: number
  readonly queued: number
}

/** A counting semaphore with a bounded wait queue: overload is refused early, not queued forever. */
export function createLimiter(concurrency: number, queueLimit: number, retryAfterSeconds = 2): Limiter {
  let active = 0
  const waiting: Array<{ grant: () => void }> = []
  const release = () => {
    const next = waiting.shift()
    if (next) next.grant()
    else active--
  }
  const releaseOnce = () => {
    let released = false
    return () => {
      if (released) return
      released = true
      release()
    }
  }
  return {
    get active() {
      return active
    },
    get queued() {
      return waiting.length
    },
    acquire(signal) {
      if (active < concurrency) {
        active++
        return Promise.resolve(releaseOnce())
      }
      if (waiting.length >= queueLimit) {
        return Promise.reject(
          new ToolError(
            'rate_limited',
            `All ${concurrency} shell slots are busy and ${queueLimit} calls are waiting.`,
            {
              hint: `Wait ${retryAfterSeconds} seconds (Retry-After) and call again, or run fewer commands at once.`,
              headers: { 'Retry-After': String(retryAfterSeconds) },
            },
          ),
        )
      }
      return new Promise((resolve, reject) => {
        const entry = {
          grant: () => {
            signal.removeEventListener('abort', onAbort)
            resolve(releaseOnce())
          },
        }
        const onAbort = () => {
          const index = waiting.indexOf(entry)
          if (index !== -1) waiting.splice(index, 1)
          reject(signal.reason)
        }
        signal.addEventListener('abort', onAbort, { once: true })
        waiting.push(entry)
      })
    },
  }
}
