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
    options?: { httpMetadata?: { contentType?: string }; onlyIf?: { etagDoesNotMatch?: string } },
  ): Promise<R2ObjectLike | null>
  delete(keys: string | string[]): Promise<void>
  list(options?: { prefix?: string; delimiter?: string; cursor?: string; limit?: number }): Promise<R2ListResultLike>
}

const unavailableHeaders = { 'Retry-After': '5' }
const probeKey = '.toolport-readiness-probe'

function unavailable(cause: unknown): ToolError {
  // R2's messages can name the bucket and account; they reach the log through `cause`, not the caller.
  return new ToolError('unavailable', 'Storage is unavailable', { cause, headers: unavailableHeaders })
}

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
  async function put(key: string, body: ObjectBody, options: PutOptions = {}): Promise<ObjectInfo> {
    assertValidKey(key)
    const bytes = await bytesOf(body)
    return guarded(async () => {
      const stored = await bucket.put(
        key,
        bytes,
        options.contentType ? { httpMetadata: { contentType: options.contentType } } : undefined,
      )
      if (!stored) throw new ToolError('conflict', 'The object changed while it was being written.')
      return infoOf(key, stored)
    })
  }

  async function create(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<boolean> {
    assertValidKey(key)
    const bytes = await bytesOf(body)
    return guarded(async () => {
      // R2 answers a put whose condition fails with null instead of the object.
      const stored = await bucket.put(key, bytes, {
        onlyIf: { etagDoesNotMatch: '*' },
        ...(options.contentType ? { httpMetadata: { contentType: options.contentType } } : {}),
      })
      return stored !== null
    })
  }

  /** One bucket.get; an object over maxBytes is refused from its size, its body unread. */
  async function getWithin(key: string, maxBytes: number): Promise<StoredObject | ObjectTooLarge | null> {
    assertValidKey(key)
    return guarded(async () => {
      const object = await bucket.get(key)
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
      return guarded(async () => {
        const object = await bucket.get(key)
        return object ? { ...infoOf(key, object), body: object.body } : null
      })
    },

    async head(key: string): Promise<ObjectInfo | null> {
      assertValidKey(key)
      return guarded(async () => {
        const object = await bucket.head(key)
        return object ? infoOf(key, object) : null
      })
    },

    put,

    async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
      assertValidPrefix(prefix)
      const listed = await guarded(() =>
        bucket.list({
          prefix,
          limit: clampListLimit(options.limit),
          ...(options.delimiter ? { delimiter: options.delimiter } : {}),
          ...(options.cursor ? { cursor: options.cursor } : {}),
        }),
      )
      const result: ListResult = {
        objects: listed.objects.map((object) => infoOf(object.key, object)),
        prefixes: [...listed.delimitedPrefixes],
      }
      if (listed.truncated && listed.cursor) result.cursor = listed.cursor
      return result
    },

    async delete(key: string): Promise<void> {
      assertValidKey(key)
      await guarded(() => bucket.delete(key))
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
