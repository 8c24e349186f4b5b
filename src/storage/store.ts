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
   * Replaces the whole object atomically: readers see the old or the new content, never a mix. A key is a
   * file or a folder, never both: a put (or copy) below an object, or onto a key that has objects below it,
   * throws ToolError conflict, also when the two race (key-tree.ts; the fs driver has it from its filesystem).
   */
  put(key: string, body: ObjectBody, options?: PutOptions): Promise<ObjectInfo>
  /**
   * Writes a small object only if no object has the key (S3's `If-None-Match: *`): of concurrent creates
   * of one key exactly one resolves true; they and any create of an existing key resolve false. For locks
   * and records, which nothing is written below: on S3, R2 and memory it skips the file-or-folder checks.
   */
  create(key: string, body: Uint8Array | string, options?: PutOptions): Promise<boolean>
  list(prefix: string, options?: ListOptions): Promise<ListResult>
  /** Idempotent: deleting a missing key succeeds. */
  delete(key: string): Promise<void>
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
