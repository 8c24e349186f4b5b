import { createServer } from 'node:http'
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolError } from '../../src/core/errors'
import { copySourceOf, createS3Client, createS3Storage, type S3StorageOptions } from '../../src/storage/s3'
import { type S3rverInstance, s3rverCredentials, startS3rver } from '../support/s3rver'
import { describeObjectStoreContract } from '../support/storage-contract'

function optionsFor(server: S3rverInstance, extra: Partial<S3StorageOptions> = {}): S3StorageOptions {
  return {
    bucket: server.bucket,
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: s3rverCredentials,
    ...extra,
  }
}

describeObjectStoreContract('s3 (s3rver)', async () => {
  const server = await startS3rver()
  return { store: createS3Storage(optionsFor(server)), cleanup: server.stop }
})

describe('s3 storage', () => {
  let server: S3rverInstance | undefined
  const running = (): S3rverInstance => {
    if (!server) throw new Error('s3rver did not start')
    return server
  }

  beforeAll(async () => {
    server = await startS3rver()
  })

  afterAll(async () => {
    await server?.stop()
  })

  it('URL-encodes the copy source, keeping "/" as the separator', () => {
    expect(copySourceOf('bucket', 'a b/c+d%41/ü?#&=.txt')).toBe('bucket/a%20b/c%2Bd%2541/%C3%BC%3F%23%26%3D.txt')
  })

  it('keeps keys under the configured prefix inside the bucket', async () => {
    const prefixed = createS3Storage(optionsFor(running(), { prefix: 'tenant-a' }))
    const plain = createS3Storage(optionsFor(running()))
    await prefixed.put('notes/x.txt', 'inside the prefix')
    const raw = await createS3Client(optionsFor(running())).send(
      new HeadObjectCommand({ Bucket: running().bucket, Key: 'tenant-a/notes/x.txt' }),
    )
    expect(raw.ContentLength).toBe(17)
    const listed = await prefixed.list('', { delimiter: '/' })
    expect(listed.prefixes).toEqual(['notes/'])
    expect((await prefixed.list('notes/')).objects.map((object) => object.key)).toEqual(['notes/x.txt'])
    expect((await plain.list('', { delimiter: '/' })).prefixes).toContain('tenant-a/')
    expect(await plain.head('notes/x.txt')).toBeNull()
    await prefixed.copy('notes/x.txt', 'notes/y.txt')
    expect(await plain.head('tenant-a/notes/y.txt')).not.toBeNull()
  })

  it('reports a missing bucket as unavailable', async () => {
    const store = createS3Storage(optionsFor(running(), { bucket: 'no-such-bucket' }))
    await expect(store.check()).rejects.toMatchObject({ code: 'unavailable' })
    await expect(store.get('x.txt')).rejects.toMatchObject({ code: 'unavailable' })
  })

  it('turns a stopped server into a quick ToolError unavailable without S3 details', async () => {
    const doomed = await startS3rver()
    const store = createS3Storage(optionsFor(doomed))
    await store.put('before.txt', 'still up')
    await doomed.stop()

    const started = Date.now()
    const operations: Array<() => Promise<unknown>> = [
      () => store.get('before.txt'),
      () => store.getStream('before.txt'),
      () => store.head('before.txt'),
      () => store.put('after.txt', 'down'),
      () => store.put('after-stream.txt', new Blob(['down']).stream()),
      () => store.list(''),
      () => store.delete('before.txt'),
      () => store.copy('before.txt', 'copy.txt'),
      () => store.check(),
    ]
    for (const operation of operations) {
      const error = await operation().then(
        () => undefined,
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(ToolError)
      expect(error).toMatchObject({
        code: 'unavailable',
        message: 'Storage is unavailable',
        headers: { 'Retry-After': '5' },
      })
    }
    expect(Date.now() - started).toBeLessThan(10_000)
  })
})

describe('lifecycle tags', () => {
  it('tags generated outputs and job records for the bucket lifecycle rule, nothing else', async () => {
    const { lifecycleTagOf } = await import('../../src/storage/s3')
    expect(lifecycleTagOf('tenants/t/workspaces/w/outputs/report.pdf')).toBe('toolport-lifecycle=output')
    expect(lifecycleTagOf('tenants/t/jobs/0000-1111.json')).toBe('toolport-lifecycle=output')
    // A job's lock is deleted after each update; one left by a crash expires with the records.
    expect(lifecycleTagOf('tenants/t/jobs/0000-1111.lock')).toBe('toolport-lifecycle=output')
    expect(lifecycleTagOf('tenants/t/workspaces/w/src/outputs.ts')).toBeUndefined()
    expect(lifecycleTagOf('tenants/t/workspaces/w/notes/outputs/x')).toBeUndefined()
  })

  // s3rver accepts x-amz-tagging but does not store it, so the request itself is checked here.
  it('sends the tag on PutObject for outputs only', async () => {
    const seen: Array<{ url: string; tagging: string | undefined }> = []
    // A bucket with nothing in it: the file-or-folder checks (HEAD, list) find nothing in the way.
    const endpoint = createServer((request, response) => {
      const url = request.url ?? ''
      if (request.method === 'PUT') seen.push({ url, tagging: request.headers['x-amz-tagging'] as string | undefined })
      request.resume()
      request.on('end', () => {
        if (request.method === 'HEAD') response.statusCode = 404
        else if (request.method === 'GET') {
          response.setHeader('content-type', 'application/xml')
          response.write(
            '<ListBucketResult><Name>b</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>',
          )
        } else if (request.method === 'DELETE') response.statusCode = 204
        else response.setHeader('ETag', '"abc"')
        response.end()
      })
    })
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = endpoint.address() as { port: number }
      const store = createS3Storage({
        bucket: 'b',
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: s3rverCredentials,
        maxAttempts: 1,
      })
      await store.put('tenants/t/workspaces/w/outputs/a.txt', 'x')
      await store.put('tenants/t/workspaces/w/keep.txt', 'y')
      expect(seen.map((request) => request.tagging)).toEqual(['toolport-lifecycle=output', undefined])
    } finally {
      endpoint.close()
    }
  })
})

// The shim in test/support/s3rver.ts is what makes s3rver answer conditional writes as AWS documents
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html); these speak to it
// with the bare SDK, so a shim that lets a condition through fails here, not only in the store above.
describe('the s3rver shim answers conditional writes as AWS does', () => {
  let server: S3rverInstance | undefined
  const client = () => {
    if (!server) throw new Error('s3rver did not start')
    return createS3Client(optionsFor(server))
  }
  const bucket = () => server?.bucket ?? ''
  const statusOf = async (send: Promise<unknown>): Promise<{ status: number; code?: string }> => {
    try {
      await send
      return { status: 200 }
    } catch (error) {
      const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } }
      return { status: failure.$metadata?.httpStatusCode ?? 0, code: failure.name }
    }
  }

  beforeAll(async () => {
    server = await startS3rver()
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('refuses If-None-Match: * on an existing key and If-Match with another etag, with 412 PreconditionFailed', async () => {
    const s3 = client()
    const first = await s3.send(
      new PutObjectCommand({ Bucket: bucket(), Key: 'shim/a', Body: 'one', IfNoneMatch: '*' }),
    )
    expect(first.ETag).toMatch(/^"[0-9a-f]{32}"$/)
    expect(
      await statusOf(s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'shim/a', Body: 'two', IfNoneMatch: '*' }))),
    ).toEqual({
      status: 412,
      code: 'PreconditionFailed',
    })
    expect(
      await statusOf(
        s3.send(
          new PutObjectCommand({
            Bucket: bucket(),
            Key: 'shim/a',
            Body: 'two',
            IfMatch: '"0123456789abcdef0123456789abcdef"',
          }),
        ),
      ),
    ).toEqual({ status: 412, code: 'PreconditionFailed' })
    // If-Match on a key that does not exist: 404 NoSuchKey, as AWS answers it; never a write.
    expect(
      await statusOf(
        s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'shim/none', Body: 'x', IfMatch: first.ETag })),
      ),
    ).toEqual({ status: 404, code: 'NoSuchKey' })
    const kept = await s3.send(new GetObjectCommand({ Bucket: bucket(), Key: 'shim/a' }))
    expect(await kept.Body?.transformToString()).toBe('one')
    expect((await statusOf(s3.send(new GetObjectCommand({ Bucket: bucket(), Key: 'shim/none' })))).status).toBe(404)
  })

  it('lets exactly one of 10 concurrent puts holding one etag land', async () => {
    const s3 = client()
    const { ETag } = await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'shim/race', Body: 'start' }))
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        statusOf(
          s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'shim/race', Body: `writer ${index}`, IfMatch: ETag })),
        ),
      ),
    )
    expect(results.filter((result) => result.status === 200)).toHaveLength(1)
    expect(results.filter((result) => result.status === 412)).toHaveLength(9)
  })

  it('deletes with If-Match only the version it names', async () => {
    const s3 = client()
    const old = await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'shim/d', Body: 'old' }))
    const current = await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'shim/d', Body: 'new' }))
    expect(
      await statusOf(s3.send(new DeleteObjectCommand({ Bucket: bucket(), Key: 'shim/d', IfMatch: old.ETag }))),
    ).toEqual({
      status: 412,
      code: 'PreconditionFailed',
    })
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket(), Key: 'shim/d' }))
    expect(head.ETag).toBe(current.ETag)
    expect(
      (await statusOf(s3.send(new DeleteObjectCommand({ Bucket: bucket(), Key: 'shim/d', IfMatch: current.ETag }))))
        .status,
    ).toBe(200)
    expect((await statusOf(s3.send(new HeadObjectCommand({ Bucket: bucket(), Key: 'shim/d' })))).status).toBe(404)
  })

  it('serves every GET during concurrent overwrites as one whole version with its own etag', async () => {
    const s3 = client()
    const versions = Array.from({ length: 8 }, (_, index) => String(index).repeat(64 * 1024))
    await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'shim/big', Body: versions[0] }))
    const reads: Promise<{ body: string; etag?: string }>[] = []
    const writes = versions.map((body) =>
      s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'shim/big', Body: body })),
    )
    for (let index = 0; index < 16; index += 1) {
      reads.push(
        s3.send(new GetObjectCommand({ Bucket: bucket(), Key: 'shim/big' })).then(async (answer) => ({
          body: (await answer.Body?.transformToString()) ?? '',
          etag: answer.ETag,
        })),
      )
    }
    const written = await Promise.all(writes)
    const etags = new Map(versions.map((body, index) => [written[index]?.ETag, body]))
    for (const read of await Promise.all(reads)) {
      expect(versions).toContain(read.body)
      expect(etags.get(read.etag)).toBe(read.body)
    }
  })
})
