import { Miniflare } from 'miniflare'
import { describe, expect, it } from 'vitest'
import { createR2Storage, type R2BucketLike } from '../../src/storage/r2'
import { describeObjectStoreContract } from '../support/storage-contract'

// Miniflare runs workerd in-process with a real (local, in-memory) R2 bucket behind the binding API.
async function startBucket(): Promise<{ bucket: R2BucketLike; stop: () => Promise<void> }> {
  const miniflare = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response(null, { status: 204 }) } }',
    r2Buckets: ['BUCKET'],
  })
  const bucket = (await miniflare.getR2Bucket('BUCKET')) as unknown as R2BucketLike
  return { bucket, stop: () => miniflare.dispose() }
}

describeObjectStoreContract('r2 (Miniflare)', async () => {
  const { bucket, stop } = await startBucket()
  return { store: createR2Storage(bucket), cleanup: stop }
})

describe('r2 storage', () => {
  it('turns binding failures into unavailable without their text', async () => {
    const broken = new Proxy({} as R2BucketLike, {
      get: () => () => Promise.reject(new Error('R2 account 0123 bucket secret-name: internal error')),
    })
    const store = createR2Storage(broken)
    for (const operation of [
      () => store.get('a.txt'),
      () => store.head('a.txt'),
      () => store.put('a.txt', 'x'),
      () => store.list(''),
      () => store.delete('a.txt'),
      () => store.copy('a.txt', 'b.txt'),
      () => store.check(),
    ]) {
      await expect(operation()).rejects.toMatchObject({ code: 'unavailable', message: 'Storage is unavailable' })
    }
  })
})
