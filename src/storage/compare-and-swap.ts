import { ToolError } from '../core/errors'
import { isPreconditionFailed, type ObjectInfo, type ObjectStore } from './store'

/**
 * The one way toolport changes shared state in a bucket: read a version and its etag, compute, and write
 * with If-Match (or If-None-Match for a new object). A writer that lost the race reads again and retries;
 * a writer that was paused, partitioned or whose clock is off simply fails its condition. There is no
 * lock object, no lease and no clock anywhere in this path.
 */
export interface CompareAndSwapOptions {
  /**
   * Attempts before giving up with 409: each lost race means another writer's version landed, so under
   * heavy contention of one key a writer may lose this many times in a row.
   */
  attempts?: number
  /** What the 409 says when every attempt lost (a path or a record name). */
  subject?: string
}

const defaultAttempts = 16

/** Jittered backoff that grows with the attempt (3-30 ms, then up to ~250 ms): spreads colliding writers. */
function backoff(attempt: number): Promise<void> {
  const ceiling = Math.min(250, 10 * 2 ** Math.min(attempt, 5))
  return new Promise((resolve) => setTimeout(resolve, 3 + Math.random() * ceiling))
}

/**
 * Runs `attempt` until it does not throw PreconditionFailed; `attempt` reads what it needs itself (the
 * second argument counts earlier lost races, for callers whose second try means something else).
 */
export async function retryOnConflict<T>(
  attempt: (lostRaces: number) => Promise<T>,
  options: CompareAndSwapOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? defaultAttempts
  for (let lost = 0; ; lost++) {
    try {
      return await attempt(lost)
    } catch (error) {
      if (!isPreconditionFailed(error)) throw error
      if (lost + 1 >= attempts) throw busy(options.subject, attempts)
      await backoff(lost)
    }
  }
}

function busy(subject: string | undefined, attempts: number): ToolError {
  return new ToolError(
    'conflict',
    `${subject ?? 'The object'} kept changing while this call tried to write it (${attempts} attempts).`,
    {
      hint: 'Other requests are changing the same thing at this moment; retry in a little while.',
      headers: { 'retry-after': '1' },
    },
  )
}

/** A JSON record and the etag it was read at: the version a compare-and-swap replaces. */
export interface Versioned<T> {
  value: T
  etag: string
}

/** null when there is no record; a record that is not JSON reads as value null, so it can be replaced. */
export async function readRecord<T>(storage: ObjectStore, key: string): Promise<Versioned<T | null> | null> {
  const object = await storage.get(key)
  if (!object) return null
  try {
    return { value: JSON.parse(new TextDecoder().decode(object.body)) as T, etag: object.etag }
  } catch {
    return { value: null, etag: object.etag }
  }
}

/**
 * Writes `value` over the version read at `etag` (undefined: only if the record does not exist). Throws
 * PreconditionFailed when another writer got there first.
 */
export function writeRecord<T>(
  storage: ObjectStore,
  key: string,
  value: T,
  etag: string | undefined,
  options: { contentType?: string } = {},
): Promise<ObjectInfo> {
  return storage.put(key, JSON.stringify(value), {
    contentType: options.contentType ?? 'application/json',
    ...(etag === undefined ? { ifNoneMatch: '*' as const } : { ifMatch: etag }),
  })
}
