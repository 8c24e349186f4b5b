import { ToolError } from '../core/errors'
import { withKeyTree } from './key-tree'
import { assertValidKey, assertValidPrefix, clampListLimit } from './keys'
import type {
  ListOptions,
  ListResult,
  ObjectBody,
  ObjectInfo,
  ObjectStore,
  ObjectStream,
  ObjectTooLarge,
  PutOptions,
  StoredObject,
} from './store'
import { created, type DeleteOptions, PreconditionFailed } from './store'

/**
 * An ObjectStore on a Cloudflare R2 bucket binding (Workers). The binding is typed structurally here
 * (the subset used), so the service does not depend on @cloudflare/workers-types and the same driver
 * runs against Miniflare's bucket in tests. R2 has no presigned URLs through the binding: files go
 * out through GET /v1/files like the fs driver's.
 */
export interface R2ObjectLike {
  key: string
  size: number
  etag: string
  uploaded: Date
  customMetadata?: Record<string, string>
}

export interface R2ObjectBodyLike extends R2ObjectLike {
  body: ReadableStream<Uint8Array>
  arrayBuffer(): Promise<ArrayBuffer>
}

export interface R2ListResultLike {
  objects: R2ObjectLike[]
  delimitedPrefixes: string[]
  truncated: boolean
  cursor?: string
}

export interface R2BucketLike {
  head(key: string): Promise<R2ObjectLike | null>
  get(key: string): Promise<R2ObjectBodyLike | null>
  put(
    key: string,
    value: ArrayBuffer | ArrayBufferView | string | ReadableStream | null,
    options?: {
      httpMetadata?: { contentType?: string }
      customMetadata?: Record<string, string>
      onlyIf?: { etagDoesNotMatch?: string; etagMatches?: string }
    },
  ): Promise<R2ObjectLike | null>
  delete(keys: string | string[]): Promise<void>
  list(options?: {
    prefix?: string
    delimiter?: string
    cursor?: string
    limit?: number
    include?: Array<'httpMetadata' | 'customMetadata'>
  }): Promise<R2ListResultLike>
}

const unavailableHeaders = { 'Retry-After': '5' }
const probeKey = '.toolport-readiness-probe'

function unavailable(cause: unknown): ToolError {
  // R2's messages can name the bucket and account; they reach the log through `cause`, not the caller.
  return new ToolError('unavailable', 'Storage is unavailable', { cause, headers: unavailableHeaders })
}

/**
 * The binding has no conditional delete, so a delete of one version (DeleteOptions.ifMatch) replaces that
 * version, compare-and-swap, with an empty tombstone marked so: a newer version another writer put is
 * never touched, and the tombstone is a version like any other (a write replaces it by its etag). The
 * driver answers a tombstone as no object (get, head, list); an unconditional delete removes it for good.
 */
const tombstoneMark = 'toolport-deleted'
const isTombstone = (object: R2ObjectLike | null): boolean => object?.customMetadata?.[tombstoneMark] === '1'

function infoOf(key: string, object: R2ObjectLike): ObjectInfo {
  return { key, size: object.size, etag: object.etag, lastModified: new Date(object.uploaded) }
}

async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    if (error instanceof ToolError) throw error
    throw unavailable(error)
  }
}

/**
 * R2 wants a stream of known length (FixedLengthStream); a caller's stream has none, so it is read
 * into memory first. Bodies are bounded by TOOLPORT_MAX_FILE_BYTES (10 MB by default) upstream.
 */
async function bytesOf(body: ObjectBody): Promise<Uint8Array> {
  if (typeof body === 'string') return new TextEncoder().encode(body)
  if (body instanceof Uint8Array) return body.slice()
  return new Uint8Array(await new Response(body).arrayBuffer())
}

export function createR2Storage(bucket: R2BucketLike): ObjectStore {
  /** R2's put with a condition; it answers a condition that fails with null instead of the object. */
  async function putIf(
    key: string,
    bytes: Uint8Array,
    onlyIf: { etagDoesNotMatch?: string; etagMatches?: string } | undefined,
    extra: { contentType?: string | undefined; customMetadata?: Record<string, string> } = {},
  ): Promise<R2ObjectLike | null> {
    return guarded(() =>
      bucket.put(key, bytes, {
        ...(onlyIf ? { onlyIf } : {}),
        ...(extra.contentType ? { httpMetadata: { contentType: extra.contentType } } : {}),
        ...(extra.customMetadata ? { customMetadata: extra.customMetadata } : {}),
      }),
    )
  }

  async function put(key: string, body: ObjectBody, options: PutOptions = {}): Promise<ObjectInfo> {
    assertValidKey(key)
    const bytes = await bytesOf(body)
    const contentType = options.contentType
    if (options.ifNoneMatch === '*') {
      const stored = await putIf(key, bytes, { etagDoesNotMatch: '*' }, { contentType })
      if (stored) return infoOf(key, stored)
      // Taken, or only by a tombstone, which is no object: replaced by its etag, as any version.
      const current = await guarded(() => bucket.head(key))
      const tombstone = current && isTombstone(current) ? current : null
      const replaced = tombstone ? await putIf(key, bytes, { etagMatches: tombstone.etag }, { contentType }) : null
      if (!replaced) throw new PreconditionFailed()
      return infoOf(key, replaced)
    }
    const onlyIf = options.ifMatch !== undefined ? { etagMatches: options.ifMatch } : undefined
    const stored = await putIf(key, bytes, onlyIf, { contentType })
    if (!stored) throw new PreconditionFailed()
    return infoOf(key, stored)
  }

  async function create(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<boolean> {
    return created(() => put(key, body, { ...options, ifNoneMatch: '*' }))
  }

  /** A live object: null for none and for a tombstone. */
  async function live<T extends R2ObjectLike>(read: () => Promise<T | null>): Promise<T | null> {
    const object = await guarded(read)
    if (!object || !isTombstone(object)) return object
    if ('body' in object) await (object as unknown as R2ObjectBodyLike).body.cancel().catch(() => {})
    return null
  }

  /** One bucket.get; an object over maxBytes is refused from its size, its body unread. */
  async function getWithin(key: string, maxBytes: number): Promise<StoredObject | ObjectTooLarge | null> {
    assertValidKey(key)
    const object = await live(() => bucket.get(key))
    return guarded(async () => {
      if (!object) return null
      if (object.size > maxBytes) {
        await object.body.cancel().catch(() => {})
        return { ...infoOf(key, object), tooLarge: true }
      }
      const body = new Uint8Array(await object.arrayBuffer())
      return { ...infoOf(key, object), size: body.byteLength, body }
    })
  }

  return withKeyTree({
    driver: 'r2',
    create,

    get: (key) => getWithin(key, Number.POSITIVE_INFINITY) as Promise<StoredObject | null>,
    getWithin,

    async getStream(key: string): Promise<ObjectStream | null> {
      assertValidKey(key)
      const object = await live(() => bucket.get(key))
      return object ? { ...infoOf(key, object), body: object.body } : null
    },

    async head(key: string): Promise<ObjectInfo | null> {
      assertValidKey(key)
      const object = await live(() => bucket.head(key))
      return object ? infoOf(key, object) : null
    },

    put,

    list: (prefix, options) => listLive(bucket, prefix, options),

    async delete(key: string, options: DeleteOptions = {}): Promise<void> {
      assertValidKey(key)
      if (options.ifMatch === undefined) return guarded(() => bucket.delete(key))
      const tombstone = await putIf(
        key,
        new Uint8Array(),
        { etagMatches: options.ifMatch },
        {
          customMetadata: { [tombstoneMark]: '1' },
        },
      )
      if (tombstone) return
      // Gone already (or a tombstone): deleted as far as this asks. Another version: not ours to delete.
      const current = await guarded(() => bucket.head(key))
      if (current && !isTombstone(current)) throw new PreconditionFailed()
    },

    async copy(fromKey: string, toKey: string): Promise<ObjectInfo> {
      assertValidKey(fromKey)
      assertValidKey(toKey)
      // The binding has no server-side copy: read the source and write it again.
      const source = await guarded(() => bucket.get(fromKey))
      if (!source) throw new ToolError('not_found', 'The object to copy does not exist.')
      if (fromKey === toKey) {
        await source.body.cancel().catch(() => {})
        return infoOf(fromKey, source)
      }
      return put(toKey, new Uint8Array(await guarded(() => source.arrayBuffer())))
    },

    async check(): Promise<void> {
      await guarded(() => bucket.head(probeKey))
    },
  })
}

/**
 * One page of live entries: tombstones are left out (the page is filled from the next ones), and a
 * folder that holds only tombstones is no folder. Pages of R2 carry the custom metadata that tells them.
 */
async function listLive(bucket: R2BucketLike, prefix: string, options: ListOptions = {}): Promise<ListResult> {
  assertValidPrefix(prefix)
  const limit = clampListLimit(options.limit)
  const result: ListResult = { objects: [], prefixes: [] }
  let cursor = options.cursor
  for (;;) {
    const wanted = limit - result.objects.length - result.prefixes.length
    const listed = await guarded(() =>
      bucket.list({
        prefix,
        limit: wanted,
        include: ['customMetadata'],
        ...(options.delimiter ? { delimiter: options.delimiter } : {}),
        ...(cursor ? { cursor } : {}),
      }),
    )
    for (const object of listed.objects) if (!isTombstone(object)) result.objects.push(infoOf(object.key, object))
    for (const folder of listed.delimitedPrefixes) {
      if ((await listLive(bucket, folder, { limit: 1 })).objects.length > 0) result.prefixes.push(folder)
    }
    cursor = listed.truncated ? listed.cursor : undefined
    if (!cursor || result.objects.length + result.prefixes.length >= limit) break
  }
  if (cursor) result.cursor = cursor
  return result
}
