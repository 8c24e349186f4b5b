import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { ToolError } from '../core/errors'
import { onFirstUse } from '../core/first-use'
import { contentDisposition } from '../core/mime'
import { withKeyTree } from './key-tree'
import { assertValidKey, assertValidPrefix, clampListLimit } from './keys'
import { emptyStream, trackBody } from './s3-body'
import { copySourceMissing, errorName, isNotFound, statusCodeOf, toStorageError, unavailable } from './s3-errors'
import type {
  ListOptions,
  ListResult,
  ObjectBody,
  ObjectInfo,
  ObjectStore,
  ObjectStream,
  ObjectTooLarge,
  PresignOptions,
  PutOptions,
  StoredObject,
} from './store'
import { created, type DeleteOptions, PreconditionFailed } from './store'

/**
 * An ObjectStore on an S3 bucket (or an S3-compatible service such as R2 or MinIO). S3 errors are
 * never shown to callers: they are logged through the ToolError cause and replaced by a generic
 * 'unavailable', because their text can name buckets, accounts and endpoints.
 */
export interface S3StorageOptions {
  bucket: string
  endpoint?: string
  region?: string
  forcePathStyle?: boolean
  /** Without credentials the SDK's default chain applies (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string }
  /** Key prefix inside the bucket, so several deployments can share one bucket. */
  prefix?: string
  /** Attempts per request including the first (default 3), so an outage fails fast instead of stalling. */
  maxAttempts?: number
  /** Milliseconds to establish a connection (default 3000). */
  connectionTimeoutMs?: number
  /** Milliseconds a connection may sit idle mid-request (default 30000); large transfers stay allowed. */
  socketTimeoutMs?: number
}

export function createS3Client(options: S3StorageOptions): S3Client {
  return new S3Client({
    ...(options.region === undefined ? {} : { region: options.region }),
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.forcePathStyle === undefined ? {} : { forcePathStyle: options.forcePathStyle }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 3_000,
      socketTimeout: options.socketTimeoutMs ?? 30_000,
    },
    // Checksums only where S3 demands them: S3-compatible services often reject the newer defaults.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
}

export function createS3Storage(options: S3StorageOptions): ObjectStore {
  const client = createS3Client(options)
  const Bucket = options.bucket
  // Streamed puts (lib-storage) and presigned links load on their first use, kept by this store: a cold
  // start that only reads does not compile them.
  const uploads = onFirstUse(() => import('@aws-sdk/lib-storage'))
  const presigner = onFirstUse(() => import('@aws-sdk/s3-request-presigner'))
  const base = normalizeBasePrefix(options.prefix)
  // Validation runs before any try block, so a bad key surfaces as the programmer error it is.
  const objectKey = (key: string) => {
    assertValidKey(key)
    return base + key
  }

  async function head(key: string): Promise<ObjectInfo | null> {
    const Key = objectKey(key)
    try {
      const output = await client.send(new HeadObjectCommand({ Bucket, Key }))
      return {
        key,
        size: output.ContentLength ?? 0,
        etag: etagOf(output.ETag),
        lastModified: dateOf(output.LastModified),
      }
    } catch (error) {
      if (isNotFound(error)) return null
      throw toStorageError(error)
    }
  }

  /** One GetObject; an object over maxBytes is refused from its Content-Length, its body unread. */
  async function getWithin(key: string, maxBytes: number): Promise<StoredObject | ObjectTooLarge | null> {
    const Key = objectKey(key)
    try {
      const output = await client.send(new GetObjectCommand({ Bucket, Key }))
      const info = { key, etag: etagOf(output.ETag), lastModified: dateOf(output.LastModified) }
      if ((output.ContentLength ?? 0) > maxBytes) {
        // Not read: closing the body gives its connection up instead of downloading what is refused.
        await output.Body?.transformToWebStream()
          .cancel()
          .catch(() => {})
        return { ...info, size: output.ContentLength ?? 0, tooLarge: true }
      }
      const body = (await output.Body?.transformToByteArray()) ?? new Uint8Array()
      return { ...info, size: body.byteLength, body }
    } catch (error) {
      if (isNotFound(error)) return null
      throw toStorageError(error)
    }
  }

  return withKeyTree({
    driver: 's3',

    get: (key) => getWithin(key, Number.POSITIVE_INFINITY) as Promise<StoredObject | null>,
    getWithin,

    async getStream(key: string): Promise<ObjectStream | null> {
      const Key = objectKey(key)
      try {
        const output = await client.send(new GetObjectCommand({ Bucket, Key }))
        const body = output.Body?.transformToWebStream() ?? emptyStream()
        return {
          key,
          size: output.ContentLength ?? 0,
          etag: etagOf(output.ETag),
          lastModified: dateOf(output.LastModified),
          body: body as ReadableStream<Uint8Array>,
        }
      } catch (error) {
        if (isNotFound(error)) return null
        throw toStorageError(error)
      }
    },

    head,

    async put(key: string, body: ObjectBody, putOptions: PutOptions = {}): Promise<ObjectInfo> {
      const Key = objectKey(key)
      const ContentType = putOptions.contentType
      const Tagging = lifecycleTagOf(key)
      const conditional = putOptions.ifMatch !== undefined || putOptions.ifNoneMatch !== undefined
      if (!(body instanceof ReadableStream) || conditional) {
        // A conditional write is one PutObject (a multipart upload would carry its condition only on its
        // completion): a stream is read first, its size bounded by the caller's own limits.
        const bytes = body instanceof ReadableStream ? await bytesOfStream(body) : encoded(body)
        const input = {
          Bucket,
          Key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType,
          Tagging,
          ...(putOptions.ifMatch !== undefined ? { IfMatch: quoted(putOptions.ifMatch) } : {}),
          ...(putOptions.ifNoneMatch !== undefined ? { IfNoneMatch: '*' } : {}),
        }
        const output = await conditionally(() => client.send(new PutObjectCommand(input))).catch((error: unknown) => {
          // AWS answers If-Match on a key that does not exist with 404 NoSuchKey (MinIO and R2 with 412):
          // either way the version it names is gone, which is a lost race, not a missing bucket.
          if (isNotFound(error) && putOptions.ifMatch !== undefined) throw new PreconditionFailed()
          throw isNotFound(error) ? toStorageError(error) : error
        })
        return { key, size: bytes.byteLength, etag: etagOf(output.ETag), lastModified: new Date() }
      }
      // PutObject needs a known length; Upload buffers parts and switches to multipart for large bodies.
      const { Upload } = await uploads()
      const tracked = trackBody(body)
      try {
        const output = await new Upload({
          client,
          params: { Bucket, Key, Body: tracked.stream, ContentType, Tagging },
        }).done()
        return { key, size: tracked.state.size, etag: etagOf(output.ETag), lastModified: new Date() }
      } catch (error) {
        // The caller's own stream failing (e.g. a size limit) keeps its error; it is not an S3 outage.
        if (tracked.state.failed) throw tracked.state.error
        // Otherwise the producer may still be waiting to be read (say, a file stream being copied in).
        await tracked.cancel(error)
        throw toStorageError(error)
      }
    },

    async create(key: string, body: Uint8Array | string, putOptions: PutOptions = {}): Promise<boolean> {
      const input = {
        Bucket,
        Key: objectKey(key),
        Body: encoded(body),
        ContentLength: encoded(body).byteLength,
        ContentType: putOptions.contentType,
        Tagging: lifecycleTagOf(key),
        IfNoneMatch: '*',
      }
      return created(() => conditionally(() => client.send(new PutObjectCommand(input))))
    },

    async list(prefix: string, listOptions: ListOptions = {}): Promise<ListResult> {
      assertValidPrefix(prefix)
      try {
        const output = await client.send(
          new ListObjectsV2Command({
            Bucket,
            Prefix: base + prefix,
            Delimiter: listOptions.delimiter,
            MaxKeys: clampListLimit(listOptions.limit),
            ContinuationToken: listOptions.cursor || undefined,
          }),
        )
        const result: ListResult = { objects: [], prefixes: [] }
        for (const object of output.Contents ?? []) {
          if (object.Key === undefined) continue
          result.objects.push({
            key: object.Key.slice(base.length),
            size: object.Size ?? 0,
            etag: etagOf(object.ETag),
            lastModified: dateOf(object.LastModified),
          })
        }
        for (const common of output.CommonPrefixes ?? []) {
          if (common.Prefix !== undefined) result.prefixes.push(common.Prefix.slice(base.length))
        }
        if (output.IsTruncated && output.NextContinuationToken) result.cursor = output.NextContinuationToken
        return result
      } catch (error) {
        if (listOptions.cursor && errorName(error) === 'InvalidArgument') {
          throw new ToolError('validation', 'The list cursor is not valid.', {
            hint: 'Pass back the cursor from the previous page unchanged, or omit it to start from the beginning.',
            details: { field: 'cursor' },
          })
        }
        throw toStorageError(error)
      }
    },

    async delete(key: string, deleteOptions: DeleteOptions = {}): Promise<void> {
      const input = {
        Bucket,
        Key: objectKey(key),
        ...(deleteOptions.ifMatch !== undefined ? { IfMatch: quoted(deleteOptions.ifMatch) } : {}),
      }
      try {
        await conditionally(() => client.send(new DeleteObjectCommand(input)))
      } catch (error) {
        if (isNotFound(error)) return
        throw error
      }
    },

    async copy(fromKey: string, toKey: string): Promise<ObjectInfo> {
      const source = objectKey(fromKey)
      const target = objectKey(toKey)
      if (source === target) {
        // S3 refuses to copy an object onto itself unchanged; the result would be the same object anyway.
        const existing = await head(fromKey)
        if (!existing) throw copySourceMissing()
        return existing
      }
      try {
        await client.send(new CopyObjectCommand({ Bucket, Key: target, CopySource: copySourceOf(Bucket, source) }))
      } catch (error) {
        if (isNotFound(error)) throw copySourceMissing()
        throw toStorageError(error)
      }
      // CopyObject does not report the size; the copy's own metadata is the reliable answer.
      const copied = await head(toKey)
      if (!copied) throw new ToolError('conflict', 'The copy was deleted while it was being made.')
      return copied
    },

    async check(): Promise<void> {
      try {
        await client.send(new HeadBucketCommand({ Bucket }))
      } catch (error) {
        throw unavailable(error)
      }
    },

    async presignGet(key: string, presign: PresignOptions): Promise<string> {
      const command = new GetObjectCommand({
        Bucket,
        Key: objectKey(key),
        // Signed into the URL, so the download gets a proper name and type whatever the object's metadata.
        ResponseContentDisposition: contentDisposition(presign.filename),
        ResponseContentType: presign.contentType,
      })
      try {
        const { getSignedUrl } = await presigner()
        // Signing is local (no request); it fails only on missing credentials.
        return await getSignedUrl(client, command, { expiresIn: presign.expiresInSeconds })
      } catch (error) {
        throw toStorageError(error)
      }
    },
  })
}

function normalizeBasePrefix(prefix: string | undefined): string {
  if (!prefix) return ''
  const base = prefix.endsWith('/') ? prefix : `${prefix}/`
  assertValidPrefix(base)
  return base
}

/**
 * Generated files (outputs/ of a workspace) and job records and locks are tagged so the bucket's lifecycle rule
 * (infra/aws, tag toolport-lifecycle=output) expires them; everything else is kept.
 */
export function lifecycleTagOf(key: string): string | undefined {
  return /(^|\/)workspaces\/[^/]+\/outputs\/|(^|\/)jobs\/[^/]+\.(json|lock)$/.test(key)
    ? 'toolport-lifecycle=output'
    : undefined
}

/** x-amz-copy-source is URL-encoded: a raw '+' would be read as a space, '?' and '#' would cut the key. */
export function copySourceOf(bucket: string, key: string): string {
  return `${bucket}/${encodeURIComponent(key).replaceAll('%2F', '/')}`
}

/** S3 quotes ETags; the quotes are HTTP syntax, not part of the version tag. */
/**
 * A conditional request as S3 answers it: 412 is PreconditionFailed; 409 ConditionalRequestConflict means
 * another conditional write of the key is in flight, and S3 asks for a retry (three, backing off); any
 * other failure is the storage's. A missing object stays a NotFound for the caller to judge.
 */
async function conditionally<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send()
    } catch (error) {
      const status = statusCodeOf(error)
      if (status === 412) throw new PreconditionFailed()
      if (isNotFound(error)) throw error
      if (status !== 409 || attempt >= 3) throw toStorageError(error)
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt * (0.5 + Math.random())))
    }
  }
}

function encoded(body: Uint8Array | string): Uint8Array {
  return typeof body === 'string' ? new TextEncoder().encode(body) : body
}

async function bytesOfStream(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

/** An etag as If-Match sends it: quoted, as S3 answers it (the driver hands them out unquoted). */
function quoted(etag: string): string {
  return etag.startsWith('"') ? etag : `"${etag}"`
}

function etagOf(etag: string | undefined): string {
  return (etag ?? '').replace(/^"(.*)"$/, '$1')
}

function dateOf(date: Date | undefined): Date {
  return date ?? new Date(0)
}
