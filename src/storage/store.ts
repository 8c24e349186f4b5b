import { ToolError } from '../core/errors'

/**
 * The ObjectStore interface every storage driver implements. Keys are '/'-separated like S3 keys;
 * there are no real folders, a "folder" is a shared key prefix. Drivers translate their own failures
 * into ToolError: a missing object is `null` (or not_found for copy), a backend that cannot be
 * reached is `unavailable`.
 */
export type StorageDriverName = 'memory' | 'fs' | 's3' | 'r2'

export interface ObjectInfo {
  key: string
  size: number
  /** Opaque version tag; changes whenever the content changes. */
  etag: string
  lastModified: Date
}

export interface StoredObject extends ObjectInfo {
  body: Uint8Array
}

/** What getWithin answers for an object larger than its limit: the object's info, its body unread. */
export interface ObjectTooLarge extends ObjectInfo {
  tooLarge: true
}

export interface ObjectStream extends ObjectInfo {
  body: ReadableStream<Uint8Array>
}

export type ObjectBody = Uint8Array | string | ReadableStream<Uint8Array>

export interface PutOptions {
  contentType?: string
  /**
   * Write only if the object is now at this etag (S3's `If-Match`): a compare-and-swap of a version read
   * before. Otherwise PreconditionFailed, and nothing is written (also when the object is gone).
   */
  ifMatch?: string
  /** Write only if no object has the key (S3's `If-None-Match: *`); otherwise PreconditionFailed. */
  ifNoneMatch?: '*'
  /**
   * The key is a record of the service's own (usage per instance and day), at a key only this writer
   * names and under a prefix no caller can reach, so no file can sit above it and nothing below: the
   * file-or-folder check of flat stores (key-tree.ts) is skipped. It costs a put on S3 four requests
   * before and four after, which a Lambda invocation pays on each response.
   */
  record?: true
}

export interface DeleteOptions {
  /**
   * Delete only the version at this etag (S3's `If-Match` on DeleteObject): a newer version another writer
   * put is never deleted (PreconditionFailed). An object already gone is deleted as far as this asks.
   */
  ifMatch?: string
}

/**
 * A conditional write or delete whose condition did not hold: the object changed (or appeared, or went)
 * since it was read. A 409 conflict if it ever reaches a caller; writers that compare-and-swap catch it,
 * read again and retry (isPreconditionFailed).
 */
export class PreconditionFailed extends ToolError {
  constructor() {
    super('conflict', 'The object changed while it was being written.', {
      hint: 'Another request changed the same file at the same moment; read it again and repeat the call.',
    })
  }
}

/** Whether a write's condition holds for the object now at its key. */
export function holds(
  current: { etag: string } | undefined,
  condition: Pick<PutOptions, 'ifMatch' | 'ifNoneMatch'>,
): boolean {
  if (condition.ifNoneMatch === '*' && current) return false
  if (condition.ifMatch !== undefined && current?.etag !== condition.ifMatch) return false
  return true
}

/** create's answer from a conditional put: false when the key was taken. */
export async function created(put: () => Promise<unknown>): Promise<boolean> {
  try {
    await put()
    return true
  } catch (error) {
    if (error instanceof PreconditionFailed) return false
    throw error
  }
}

export function isPreconditionFailed(error: unknown): error is PreconditionFailed {
  return error instanceof PreconditionFailed
}

export interface ListOptions {
  /** With '/', keys below the next '/' after the prefix are folded into `prefixes`. */
  delimiter?: '/'
  /** Opaque cursor from a previous page's `cursor`. */
  cursor?: string
  /** Maximum number of objects plus prefixes in one page (default and maximum 1000). */
  limit?: number
}

export interface ListResult {
  /** Objects in ascending key order (UTF-8 byte order, as S3). */
  objects: ObjectInfo[]
  /** Common prefixes (each ending in '/') when a delimiter was given, ascending. */
  prefixes: string[]
  /** Present when more results exist; pass it back as `cursor`. */
  cursor?: string
}

export interface ObjectStore {
  readonly driver: StorageDriverName
  get(key: string): Promise<StoredObject | null>
  /**
   * get, for an object of at most maxBytes; a larger one is not read (ObjectTooLarge). One request
   * where head-then-get took two, with the size checked on the object that is read.
   */
  getWithin(key: string, maxBytes: number): Promise<StoredObject | ObjectTooLarge | null>
  getStream(key: string): Promise<ObjectStream | null>
  head(key: string): Promise<ObjectInfo | null>
  /**
   * Replaces the whole object atomically: readers see the old or the new content, never a mix. With
   * ifMatch or ifNoneMatch it is a compare-and-swap: of concurrent writers holding one condition exactly
   * one lands, the others get PreconditionFailed. A key is a file or a folder, never both: a put (or copy)
   * below an object, or onto a key that has objects below it, throws ToolError conflict, also when the two
   * race (key-tree.ts; the fs driver has it from its filesystem).
   */
  put(key: string, body: ObjectBody, options?: PutOptions): Promise<ObjectInfo>
  /**
   * put with ifNoneMatch for records, answering false instead of throwing when the key is taken: of
   * concurrent creates of one key exactly one resolves true. Records have nothing below them: on S3, R2
   * and memory it skips the file-or-folder checks.
   */
  create(key: string, body: Uint8Array | string, options?: PutOptions): Promise<boolean>
  list(prefix: string, options?: ListOptions): Promise<ListResult>
  /** Idempotent: deleting a missing key succeeds. With ifMatch, only that version (DeleteOptions). */
  delete(key: string, options?: DeleteOptions): Promise<void>
  /** Throws ToolError not_found when the source is missing. */
  copy(fromKey: string, toKey: string): Promise<ObjectInfo>
  /** Readiness probe: resolves when the backend answers, throws ToolError unavailable otherwise. */
  check(): Promise<void>
  /**
   * A URL anyone can GET the object from until it expires, served as a download named `filename`.
   * Only drivers whose backend signs URLs itself (s3) have it; others hand files out via GET /v1/files.
   */
  presignGet?(key: string, options: PresignOptions): Promise<string>
}

export interface PresignOptions {
  expiresInSeconds: number
  filename: string
  contentType: string
}

export const maxListLimit = 1000
