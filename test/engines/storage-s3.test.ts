import { createServer } from 'node:http'
import { HeadObjectCommand } from '@aws-sdk/client-s3'
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
      if (request.method === 'PUT' && !url.includes('.toolport-key-locks'))
        seen.push({ url, tagging: request.headers['x-amz-tagging'] as string | undefined })
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
