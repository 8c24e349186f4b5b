import { sha256Hex } from '../core/digest'
import { ToolError } from '../core/errors'
import { withKeyTree } from './key-tree'
import { assertValidKey, assertValidPrefix, clampListLimit, rollUpKey, selectListPage } from './keys'
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
import { created, type DeleteOptions, holds, PreconditionFailed } from './store'

/**
 * An ObjectStore held in a Map, for tests and single-process demos. Web APIs only, so it runs on any
 * runtime. Stored bytes are never shared with callers: a caller mutating its buffer cannot change an
 * object after the fact.
 */
interface MemoryObject {
  body: Uint8Array<ArrayBuffer>
  etag: string
  lastModified: Date
  contentType: string | undefined
}

export function createMemoryStorage(): ObjectStore {
  const objects = new Map<string, MemoryObject>()

  function infoOf(key: string, object: MemoryObject): ObjectInfo {
    return { key, size: object.body.byteLength, etag: object.etag, lastModified: new Date(object.lastModified) }
  }

  function find(key: string): MemoryObject | undefined {
    assertValidKey(key)
    return objects.get(key)
  }

  async function getWithin(key: string, maxBytes: number): Promise<StoredObject | ObjectTooLarge | null> {
    const object = find(key)
    if (!object) return null
    if (object.body.byteLength > maxBytes) return { ...infoOf(key, object), tooLarge: true }
    return { ...infoOf(key, object), body: object.body.slice() }
  }

  async function put(key: string, body: ObjectBody, options: PutOptions = {}): Promise<ObjectInfo> {
    assertValidKey(key)
    const bytes = await bytesOf(body)
    // Of the content, as S3's MD5 etags: a compare-and-swap holds while the content is what was read.
    const etag = await sha256Hex(bytes)
    // Checked after the awaits, right before the synchronous set: no other write can come between.
    if (!holds(objects.get(key), options)) throw new PreconditionFailed()
    const object: MemoryObject = { body: bytes, etag, lastModified: new Date(), contentType: options.contentType }
    objects.set(key, object)
    return infoOf(key, object)
  }

  return withKeyTree({
    driver: 'memory',

    get: (key) => getWithin(key, Number.POSITIVE_INFINITY) as Promise<StoredObject | null>,
    getWithin,

    async getStream(key: string): Promise<ObjectStream | null> {
      const object = find(key)
      if (!object) return null
      const body = object.body.slice()
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          if (body.byteLength > 0) controller.enqueue(body)
          controller.close()
        },
      })
      return { ...infoOf(key, object), body: stream }
    },

    async head(key: string): Promise<ObjectInfo | null> {
      const object = find(key)
      return object ? infoOf(key, object) : null
    },

    put,

    async create(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<boolean> {
      return created(() => put(key, body, { ...options, ifNoneMatch: '*' }))
    },

    async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
      assertValidPrefix(prefix)
      const entries: string[] = []
      for (const key of objects.keys()) {
        if (key.startsWith(prefix)) entries.push(rollUpKey(key, prefix, options.delimiter))
      }
      const page = selectListPage(entries, options.cursor, clampListLimit(options.limit))
      const result: ListResult = { objects: [], prefixes: [] }
      for (const entry of page.entries) {
        const object = objects.get(entry)
        if (entry.endsWith('/')) result.prefixes.push(entry)
        else if (object) result.objects.push(infoOf(entry, object))
      }
      if (page.cursor !== undefined) result.cursor = page.cursor
      return result
    },

    async delete(key: string, options: DeleteOptions = {}): Promise<void> {
      assertValidKey(key)
      const current = objects.get(key)
      if (current && options.ifMatch !== undefined && current.etag !== options.ifMatch) throw new PreconditionFailed()
      objects.delete(key)
    },

    async copy(fromKey: string, toKey: string): Promise<ObjectInfo> {
      assertValidKey(toKey)
      const source = find(fromKey)
      if (!source) throw new ToolError('not_found', 'The object to copy does not exist.')
      // Sharing the buffer is safe: stored bytes are never mutated and never handed out uncopied.
      const copy: MemoryObject = { ...source, lastModified: new Date() }
      objects.set(toKey, copy)
      return infoOf(toKey, copy)
    },

    async check(): Promise<void> {},
  })
}

async function bytesOf(body: ObjectBody): Promise<Uint8Array<ArrayBuffer>> {
  if (typeof body === 'string') return new TextEncoder().encode(body)
  if (body instanceof Uint8Array) return body.slice()
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of readChunks(body)) {
    chunks.push(chunk)
    size += chunk.byteLength
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

async function* readChunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}
