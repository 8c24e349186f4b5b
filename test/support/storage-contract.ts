import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolError } from '../../src/core/errors'
import { compareKeys } from '../../src/storage/keys'
import { isPreconditionFailed, type ListOptions, type ListResult, type ObjectStore } from '../../src/storage/store'

/**
 * The behaviour every ObjectStore driver must share, run by each driver's test file. Each test works
 * under its own key prefix, so tests never see each other's objects even on a shared backend.
 */
export interface ContractSubject {
  store: ObjectStore
  cleanup?: () => Promise<void>
}

const specialNames = [
  'with space.txt',
  'ü/日本.txt',
  'hash#.txt',
  'question?.txt',
  'amp&.txt',
  'equals=.txt',
  'plus+sign.txt',
  'percent%41.txt',
  'emoji 😀.txt',
]

const invalidKeys = ['../x', '/abs', 'a//b', 'a/./b', '', 'a\\b', 'a\u0000b']

export function describeObjectStoreContract(name: string, setup: () => Promise<ContractSubject>): void {
  describe(`ObjectStore contract: ${name}`, () => {
    const run = `contract-${crypto.randomUUID().slice(0, 8)}`
    let subject: ContractSubject | undefined
    const store = (): ObjectStore => {
      if (!subject) throw new Error('the contract setup did not run')
      return subject.store
    }
    /** A key prefix of its own for one test. */
    const area = (label: string) => `${run}/${label}/`

    beforeAll(async () => {
      subject = await setup()
    })

    afterAll(async () => {
      await subject?.cleanup?.()
    })

    describe('put and get', () => {
      it('round-trips bytes and keeps stored data apart from caller buffers', async () => {
        const key = `${area('bytes')}data.bin`
        const original = new Uint8Array([0, 1, 2, 127, 128, 254, 255])
        const info = await store().put(key, original)
        expect(info).toMatchObject({ key, size: original.byteLength })
        original[0] = 99
        const first = await store().get(key)
        expect(first?.body).toEqual(new Uint8Array([0, 1, 2, 127, 128, 254, 255]))
        if (first) first.body[1] = 99
        expect((await store().get(key))?.body).toEqual(new Uint8Array([0, 1, 2, 127, 128, 254, 255]))
      })

      it('round-trips unicode strings as UTF-8', async () => {
        const key = `${area('unicode')}text.txt`
        const text = 'Grüße, 日本語, emoji 😀, nul-free\n'
        const info = await store().put(key, text, { contentType: 'text/plain; charset=utf-8' })
        expect(info.size).toBe(new TextEncoder().encode(text).byteLength)
        const stored = await store().get(key)
        expect(new TextDecoder().decode(stored?.body)).toBe(text)
      })

      it('stores an empty body', async () => {
        const key = `${area('empty')}nothing`
        await store().put(key, '')
        const stored = await store().get(key)
        expect(stored?.body.byteLength).toBe(0)
        expect(stored?.size).toBe(0)
        expect((await store().head(key))?.size).toBe(0)
        await store().put(key, new Uint8Array())
        expect((await store().get(key))?.size).toBe(0)
      })

      it('round-trips a 2 MB binary body', async () => {
        const key = `${area('two-mb')}blob.bin`
        const bytes = patternBytes(2 * 1024 * 1024, 7)
        await store().put(key, bytes)
        const stored = await store().get(key)
        expect(stored?.size).toBe(bytes.byteLength)
        expect(sameBytes(stored?.body, bytes)).toBe(true)
      })

      it('overwrites the whole content and changes the etag', async () => {
        const key = `${area('overwrite')}file.txt`
        const first = await store().put(key, 'the first, longer version')
        const second = await store().put(key, 'second')
        expect(text((await store().get(key))?.body)).toBe('second')
        expect(second.etag).not.toBe(first.etag)
        // Same size, different content: the etag must still change.
        const third = await store().put(key, 'SECOND')
        expect(text((await store().get(key))?.body)).toBe('SECOND')
        expect(third.etag).not.toBe(second.etag)
        expect((await store().head(key))?.etag).toBe(third.etag)
      })

      it('reports size, etag and lastModified from head, matching put and get', async () => {
        const key = `${area('head')}file.txt`
        const before = Date.now()
        const put = await store().put(key, 'twelve bytes')
        const head = await store().head(key)
        const got = await store().get(key)
        expect(head).toMatchObject({ key, size: 12, etag: put.etag })
        expect(got).toMatchObject({ key, size: 12, etag: put.etag })
        expect(head?.etag).not.toBe('')
        expect(head?.lastModified).toBeInstanceOf(Date)
        // Second-granularity backends (S3) round down; allow for that and for clock skew.
        expect(Math.abs((head?.lastModified.getTime() ?? 0) - before)).toBeLessThan(60_000)
      })

      it('returns null for a missing key from get, getWithin, getStream and head', async () => {
        const key = `${area('missing')}nope.txt`
        expect(await store().get(key)).toBeNull()
        expect(await store().getWithin(key, 1000)).toBeNull()
        expect(await store().getStream(key)).toBeNull()
        expect(await store().head(key)).toBeNull()
      })

      it('reads with getWithin up to the limit and leaves a larger object unread, with its info', async () => {
        const key = `${area('within')}file.bin`
        const bytes = patternBytes(300 * 1024, 3)
        const put = await store().put(key, bytes)
        const exact = await store().getWithin(key, bytes.byteLength)
        expect(exact && 'body' in exact && sameBytes(exact.body, bytes)).toBe(true)
        expect(exact).toMatchObject({ key, size: bytes.byteLength, etag: put.etag })
        const refused = await store().getWithin(key, bytes.byteLength - 1)
        expect(refused).toMatchObject({ key, size: bytes.byteLength, etag: put.etag, tooLarge: true })
        expect(refused && 'body' in refused).toBe(false)
        // The object is still whole, and a refused read left the store usable (S3: the connection it gave up).
        expect(sameBytes((await store().get(key))?.body, bytes)).toBe(true)
        await store().put(key, 'small')
        expect(text(((await store().getWithin(key, 5)) as { body?: Uint8Array } | null)?.body)).toBe('small')
      })
    })

    describe('streams', () => {
      it('reads a 5 MB object back through getStream', async () => {
        const key = `${area('get-stream')}big.bin`
        const bytes = patternBytes(5 * 1024 * 1024, 11)
        await store().put(key, bytes)
        const stream = await store().getStream(key)
        expect(stream).toMatchObject({ key, size: bytes.byteLength })
        expect(sameBytes(await readAll(stream?.body), bytes)).toBe(true)
      })

      it('writes from a ReadableStream, small and larger than one multipart part', async () => {
        const small = `${area('put-stream')}small.txt`
        const smallInfo = await store().put(small, streamOf(new TextEncoder().encode('hello, streaming world'), 5))
        expect(smallInfo.size).toBe(22)
        expect(text((await store().get(small))?.body)).toBe('hello, streaming world')

        const large = `${area('put-stream')}large.bin`
        const bytes = patternBytes(6 * 1024 * 1024 + 123, 13)
        const info = await store().put(large, streamOf(bytes, 64 * 1024))
        expect(info).toMatchObject({ key: large, size: bytes.byteLength })
        expect((await store().head(large))?.etag).toBe(info.etag)
        expect(sameBytes((await store().get(large))?.body, bytes)).toBe(true)
      })
    })

    describe('delete', () => {
      it('is idempotent', async () => {
        const key = `${area('delete-missing')}ghost.txt`
        await expect(store().delete(key)).resolves.toBeUndefined()
        await store().put(key, 'x')
        await store().delete(key)
        await expect(store().delete(key)).resolves.toBeUndefined()
      })

      it('removes the object', async () => {
        const key = `${area('delete')}file.txt`
        await store().put(key, 'content')
        await store().delete(key)
        expect(await store().get(key)).toBeNull()
        expect(await store().head(key)).toBeNull()
      })
    })

    describe('copy', () => {
      it('copies content and leaves the source in place', async () => {
        const base = area('copy')
        await store().put(`${base}source.txt`, 'copied content')
        const info = await store().copy(`${base}source.txt`, `${base}target/copy.txt`)
        expect(info).toMatchObject({ key: `${base}target/copy.txt`, size: 14 })
        expect(info.etag).toBe((await store().head(`${base}target/copy.txt`))?.etag)
        expect(text((await store().get(`${base}target/copy.txt`))?.body)).toBe('copied content')
        expect(text((await store().get(`${base}source.txt`))?.body)).toBe('copied content')
      })

      it('overwrites an existing target, and copying onto itself keeps the object', async () => {
        const base = area('copy-overwrite')
        await store().put(`${base}a.txt`, 'new content')
        await store().put(`${base}b.txt`, 'old content that is longer')
        await store().copy(`${base}a.txt`, `${base}b.txt`)
        expect(text((await store().get(`${base}b.txt`))?.body)).toBe('new content')
        const self = await store().copy(`${base}a.txt`, `${base}a.txt`)
        expect(self.size).toBe(11)
        expect(text((await store().get(`${base}a.txt`))?.body)).toBe('new content')
      })

      it('copies keys with spaces, unicode and URL-special characters', async () => {
        const base = area('copy-special')
        for (const [index, source] of specialNames.entries()) {
          await store().put(`${base}${source}`, `content ${index}`)
          const target = `${base}copies/${index} ${specialNames[(index + 1) % specialNames.length]}`
          await store().copy(`${base}${source}`, target)
          expect(text((await store().get(target))?.body)).toBe(`content ${index}`)
        }
      })

      it('throws not_found when the source is missing', async () => {
        const base = area('copy-missing')
        const attempt = store().copy(`${base}missing.txt`, `${base}target.txt`)
        await expect(attempt).rejects.toBeInstanceOf(ToolError)
        await expect(attempt).rejects.toMatchObject({ code: 'not_found' })
        expect(await store().head(`${base}target.txt`)).toBeNull()
      })
    })

    describe('list', () => {
      it('matches a string prefix, not only whole folders', async () => {
        const base = area('prefix-match')
        await putAll(store(), base, ['a/file', 'a/fi/x', 'a/fig', 'a/f', 'a/g', 'a/f.txt', 'b/fi'])
        const flat = await store().list(`${base}a/fi`)
        expect(keysOf(flat, base)).toEqual(['a/fi/x', 'a/fig', 'a/file'])
        expect(flat.prefixes).toEqual([])
        const folded = await store().list(`${base}a/fi`, { delimiter: '/' })
        expect(keysOf(folded, base)).toEqual(['a/fig', 'a/file'])
        expect(folded.prefixes).toEqual([`${base}a/fi/`])
      })

      it('rolls keys below the delimiter up into common prefixes', async () => {
        const base = area('rollup')
        await putAll(store(), base, ['x', 'd1/a', 'd1/b', 'd2/c/d', 'd2/e'])
        const top = await store().list(base, { delimiter: '/' })
        expect(keysOf(top, base)).toEqual(['x'])
        expect(top.prefixes).toEqual([`${base}d1/`, `${base}d2/`])
        expect(top.cursor).toBeUndefined()
        const inner = await store().list(`${base}d2/`, { delimiter: '/' })
        expect(keysOf(inner, base)).toEqual(['d2/e'])
        expect(inner.prefixes).toEqual([`${base}d2/c/`])
        const flat = await store().list(base)
        expect(keysOf(flat, base)).toEqual(['d1/a', 'd1/b', 'd2/c/d', 'd2/e', 'x'])
      })

      it('lists in ascending UTF-8 byte order', async () => {
        const base = area('order')
        // '-' < '.' < '/' in ASCII, and U+FF5E sorts before U+1F600 in UTF-8 but not in UTF-16.
        const names = ['b', 'a.txt', 'a/b', 'a-b', 'B', 'ä', '😀', '\uff5e', 'z', 'a0']
        await putAll(store(), base, names)
        const expected = [...names].sort(compareKeys)
        const listed = await store().list(base)
        expect(keysOf(listed, base)).toEqual(expected)
        const gathered = await listAll(store(), base, { limit: 3 })
        expect(gathered.objects).toEqual(expected.map((name) => `${base}${name}`))
      })

      it('reports size and etag for listed objects', async () => {
        const base = area('list-info')
        const put = await store().put(`${base}file.txt`, 'seven b')
        const listed = await store().list(base)
        expect(listed.objects).toHaveLength(1)
        expect(listed.objects[0]).toMatchObject({ key: `${base}file.txt`, size: 7, etag: put.etag })
        expect(listed.objects[0]?.lastModified).toBeInstanceOf(Date)
      })

      it('pages through 7 keys with limit 2, returning each exactly once', async () => {
        const base = area('pages-flat')
        const names = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']
        await putAll(store(), base, names)
        const gathered = await listAll(store(), base, { limit: 2 })
        expect(gathered.objects).toEqual(names.map((name) => `${base}${name}`))
        expect(gathered.prefixes).toEqual([])
        expect(gathered.pages).toBe(4)
      })

      it('pages with a delimiter, counting prefixes and never repeating one', async () => {
        const base = area('pages-folded')
        await putAll(store(), base, ['a', 'b/1', 'b/2', 'c', 'd/x/y', 'e', 'f/1'])
        const gathered = await listAll(store(), base, { limit: 2, delimiter: '/' })
        expect(gathered.objects).toEqual(['a', 'c', 'e'].map((name) => `${base}${name}`))
        expect(gathered.prefixes).toEqual(['b/', 'd/', 'f/'].map((name) => `${base}${name}`))
        expect(gathered.pages).toBe(3)
      })

      it('returns an empty result for a prefix with nothing under it', async () => {
        const base = area('list-missing')
        expect(await store().list(`${base}nothing/`)).toEqual({ objects: [], prefixes: [] })
        expect(await store().list(`${base}nothing/`, { delimiter: '/' })).toEqual({ objects: [], prefixes: [] })
      })

      it('drops a folder prefix once its last key is deleted', async () => {
        const base = area('folder-vanishes')
        await store().put(`${base}keep.txt`, 'k')
        await store().put(`${base}folder/deep/only.txt`, 'o')
        expect((await store().list(base, { delimiter: '/' })).prefixes).toEqual([`${base}folder/`])
        await store().delete(`${base}folder/deep/only.txt`)
        const after = await store().list(base, { delimiter: '/' })
        expect(after.prefixes).toEqual([])
        expect(keysOf(after, base)).toEqual(['keep.txt'])
        expect(await store().list(`${base}folder/`)).toEqual({ objects: [], prefixes: [] })
      })
    })

    describe('keys', () => {
      it('handles spaces, unicode and URL-special characters', async () => {
        const base = area('special')
        for (const [index, name] of specialNames.entries()) {
          const info = await store().put(`${base}${name}`, `value ${index}`)
          expect(info.key).toBe(`${base}${name}`)
        }
        for (const [index, name] of specialNames.entries()) {
          expect(text((await store().get(`${base}${name}`))?.body)).toBe(`value ${index}`)
          expect((await store().head(`${base}${name}`))?.size).toBe(`value ${index}`.length)
        }
        const listed = await listAll(store(), base, {})
        expect(listed.objects).toEqual(specialNames.map((name) => `${base}${name}`).sort(compareKeys))
        const folded = await store().list(base, { delimiter: '/' })
        expect(folded.prefixes).toEqual([`${base}ü/`])
        for (const name of specialNames) await store().delete(`${base}${name}`)
        expect(await store().list(base)).toEqual({ objects: [], prefixes: [] })
      })

      it('rejects invalid keys in put, get and list', async () => {
        for (const key of invalidKeys) {
          await expect(store().put(key, 'x'), JSON.stringify(key)).rejects.toThrow()
          await expect(store().get(key), JSON.stringify(key)).rejects.toThrow()
          await expect(store().head(key), JSON.stringify(key)).rejects.toThrow()
          await expect(store().delete(key), JSON.stringify(key)).rejects.toThrow()
          await expect(store().create(key, 'x'), JSON.stringify(key)).rejects.toThrow()
        }
        await expect(store().list('../')).rejects.toThrow()
        await expect(store().copy('ok.txt', '../escape')).rejects.toThrow()
      })
    })

    describe('concurrency', () => {
      it('ends concurrent puts to one key with one complete value', async () => {
        const key = `${area('same-key')}contested.bin`
        const size = 256 * 1024
        const fills = [1, 2, 3, 4, 5, 6, 7, 8]
        await Promise.all(fills.map((fill) => store().put(key, new Uint8Array(size).fill(fill))))
        const stored = await store().get(key)
        expect(stored?.size).toBe(size)
        const first = stored?.body[0] ?? -1
        expect(fills).toContain(first)
        expect(stored?.body.every((byte) => byte === first)).toBe(true)
      })

      it('lands puts into a folder that a concurrent delete is emptying', async () => {
        // On a filesystem the delete prunes the emptied folders while the put is creating them.
        const base = area('prune-race')
        for (let round = 0; round < 25; round++) {
          const folder = `${base}r${round}/deep/er/`
          await store().put(`${folder}old.txt`, 'old')
          await Promise.all([
            store().delete(`${folder}old.txt`),
            store().put(`${folder}new.txt`, `new ${round}`),
            store().create(`${folder}created.txt`, `created ${round}`),
          ])
          expect(text((await store().get(`${folder}new.txt`))?.body)).toBe(`new ${round}`)
          expect(text((await store().get(`${folder}created.txt`))?.body)).toBe(`created ${round}`)
        }
      })

      it('lands 20 concurrent puts to different keys', async () => {
        const base = area('many-keys')
        const names = Array.from({ length: 20 }, (_, index) => `folder${index % 3}/file-${index}.txt`)
        await Promise.all(names.map((name, index) => store().put(`${base}${name}`, `content ${index}`)))
        for (const [index, name] of names.entries()) {
          expect(text((await store().get(`${base}${name}`))?.body)).toBe(`content ${index}`)
        }
        expect((await listAll(store(), base, {})).objects).toHaveLength(20)
      })
    })

    describe('files and folders', () => {
      const refused = async (operation: Promise<unknown>) => {
        const error = await operation.then(
          () => undefined,
          (failure: unknown) => failure,
        )
        expect(error, 'expected a conflict').toBeInstanceOf(ToolError)
        expect((error as ToolError).code).toBe('conflict')
      }

      it('refuses a key below an object, and an object where a folder is, for put and copy', async () => {
        const base = area('file-folder')
        await store().put(`${base}file`, 'a file')
        await refused(store().put(`${base}file/inside.txt`, 'x'))
        await refused(store().put(`${base}file/deeper/inside.txt`, 'x'))
        await store().put(`${base}folder/inside.txt`, 'inside')
        await refused(store().put(`${base}folder`, 'x'))
        await refused(store().copy(`${base}file`, `${base}folder`))
        await refused(store().copy(`${base}folder/inside.txt`, `${base}file/copied.txt`))
        expect((await listAll(store(), base, {})).objects.sort()).toEqual([`${base}file`, `${base}folder/inside.txt`])
        // Siblings, overwrites and names that only share a prefix are fine.
        await store().put(`${base}file`, 'overwritten')
        await store().put(`${base}file.txt`, 'a sibling')
        await store().put(`${base}folder/second.txt`, 'second')
        expect(text((await store().get(`${base}file`))?.body)).toBe('overwritten')
      })

      it('never keeps x and x/y when both are written at once', async () => {
        const base = area('file-folder-race')
        for (let round = 0; round < 12; round++) {
          const x = `${base}r${round}/x`
          const below = round % 2 === 0 ? `${x}/y` : `${x}/y/z`
          const [file, folder] = await Promise.allSettled([store().put(x, 'file'), store().put(below, 'folder')])
          const landed = [file, folder].filter((result) => result.status === 'fulfilled')
          expect(landed.length, `round ${round}`).toBeLessThanOrEqual(1)
          for (const result of [file, folder]) {
            if (result.status === 'rejected') expect((result.reason as ToolError).code).toBe('conflict')
          }
          const hasFile = (await store().head(x)) !== null
          const hasFolder = (await store().list(`${x}/`)).objects.length > 0
          expect(hasFile && hasFolder, `round ${round}: both a file and a folder`).toBe(false)
        }
      })

      it('lets concurrent writes of different files in one folder all land', async () => {
        const base = area('file-folder-siblings')
        const names = Array.from({ length: 12 }, (_, index) => `${base}shared/file-${index}.txt`)
        await Promise.all(names.map((name) => store().put(name, name)))
        expect((await listAll(store(), `${base}shared/`, {})).objects).toHaveLength(12)
      })
    })

    describe('create (only if absent)', () => {
      it('writes a new key once, and never replaces an existing object', async () => {
        const key = `${area('create')}claim.json`
        expect(await store().create(key, '{"first":true}', { contentType: 'application/json' })).toBe(true)
        expect(text((await store().get(key))?.body)).toBe('{"first":true}')
        expect(await store().create(key, '{"second":true}')).toBe(false)
        expect(text((await store().get(key))?.body)).toBe('{"first":true}')
        const put = `${area('create')}put.txt`
        await store().put(put, 'put first')
        expect(await store().create(put, 'created')).toBe(false)
        expect(text((await store().get(put))?.body)).toBe('put first')
        await store().delete(key)
        expect(await store().create(key, 'again')).toBe(true)
        expect(text((await store().get(key))?.body)).toBe('again')
      })

      it('lets exactly one of 12 concurrent creates of a key win, and keeps its value', async () => {
        const key = `${area('create-race')}claim.txt`
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, index) => store().create(key, `writer ${index}`)),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
        expect(text((await store().get(key))?.body)).toBe(`writer ${results.indexOf(true)}`)
        expect((await listAll(store(), area('create-race'), {})).objects).toEqual([key])
      })
    })

    describe('conditional writes (compare-and-swap)', () => {
      const refused = { name: 'ToolError', code: 'conflict' }

      it('puts with ifMatch only over the version read, and never onto a missing key', async () => {
        const key = `${area('if-match')}file.txt`
        const first = await store().put(key, 'one')
        const second = await store().put(key, 'two', { ifMatch: first.etag })
        expect(text((await store().get(key))?.body)).toBe('two')
        // The etag read before the last write is stale now: nothing is written.
        await expect(store().put(key, 'three', { ifMatch: first.etag })).rejects.toSatisfy(isPreconditionFailed)
        expect(text((await store().get(key))?.body)).toBe('two')
        expect((await store().head(key))?.etag).toBe(second.etag)
        await expect(store().put(`${area('if-match')}missing.txt`, 'x', { ifMatch: first.etag })).rejects.toMatchObject(
          refused,
        )
        expect(await store().head(`${area('if-match')}missing.txt`)).toBeNull()
      })

      it('puts with ifNoneMatch only where no object is, a stream body too', async () => {
        const key = `${area('if-none-match')}file.txt`
        await store().put(key, 'first', { ifNoneMatch: '*' })
        await expect(store().put(key, 'second', { ifNoneMatch: '*' })).rejects.toSatisfy(isPreconditionFailed)
        await expect(
          store().put(key, streamOf(new TextEncoder().encode('streamed'), 4), { ifNoneMatch: '*' }),
        ).rejects.toSatisfy(isPreconditionFailed)
        expect(text((await store().get(key))?.body)).toBe('first')
        const streamed = `${area('if-none-match')}stream.txt`
        await store().put(streamed, streamOf(new TextEncoder().encode('streamed'), 4), { ifNoneMatch: '*' })
        expect(text((await store().get(streamed))?.body)).toBe('streamed')
      })

      it('deletes with ifMatch only the version read: a newer one stays, a missing one is deleted already', async () => {
        const key = `${area('delete-if-match')}file.txt`
        const old = await store().put(key, 'old')
        await store().put(key, 'newer version')
        await expect(store().delete(key, { ifMatch: old.etag })).rejects.toSatisfy(isPreconditionFailed)
        expect(text((await store().get(key))?.body)).toBe('newer version')
        const current = await store().head(key)
        await store().delete(key, { ifMatch: current?.etag as string })
        expect(await store().head(key)).toBeNull()
        expect((await listAll(store(), area('delete-if-match'), {})).objects).toEqual([])
        await expect(store().delete(key, { ifMatch: current?.etag as string })).resolves.toBeUndefined()
        // A key whose version was deleted conditionally is free for a create again.
        expect(await store().create(key, 'again')).toBe(true)
      })

      it('lets exactly one of 12 concurrent writers holding one etag land', async () => {
        const key = `${area('cas-race')}file.txt`
        const base = await store().put(key, 'base')
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, index) => store().put(key, `writer ${index}`, { ifMatch: base.etag })),
        )
        const won = results.flatMap((result, index) => (result.status === 'fulfilled' ? [index] : []))
        expect(won).toHaveLength(1)
        for (const result of results) {
          if (result.status === 'rejected') expect(isPreconditionFailed(result.reason)).toBe(true)
        }
        expect(text((await store().get(key))?.body)).toBe(`writer ${won[0]}`)
      })

      it('loses no increment of 16 concurrent read-modify-write loops', async () => {
        const key = `${area('counter')}count.txt`
        await store().put(key, '0')
        const increment = async () => {
          for (;;) {
            const current = await store().get(key)
            const next = String(Number(text(current?.body)) + 1)
            try {
              await store().put(key, next, { ifMatch: current?.etag as string })
              return
            } catch (error) {
              if (!isPreconditionFailed(error)) throw error
            }
          }
        }
        await Promise.all(Array.from({ length: 16 }, increment))
        expect(text((await store().get(key))?.body)).toBe('16')
      })

      it('gives each version of a key its own etag, even written in the same millisecond', async () => {
        const key = `${area('versions')}file.txt`
        const etags: string[] = []
        // Same size each time: only the version tells them apart.
        for (const body of ['aaaa', 'bbbb', 'cccc', 'dddd']) etags.push((await store().put(key, body)).etag)
        expect(new Set(etags).size).toBe(4)
      })
    })

    it('check() resolves when the backend is reachable', async () => {
      await expect(store().check()).resolves.toBeUndefined()
    })
  })
}

async function putAll(store: ObjectStore, base: string, names: string[]): Promise<void> {
  for (const name of names) await store.put(`${base}${name}`, `content of ${name}`)
}

function keysOf(result: ListResult, base: string): string[] {
  return result.objects.map((object) => object.key.slice(base.length))
}

/** Follows cursors to the end, checking each page against the limit and the page order. */
async function listAll(
  store: ObjectStore,
  prefix: string,
  options: ListOptions,
): Promise<{ objects: string[]; prefixes: string[]; pages: number }> {
  const objects: string[] = []
  const prefixes: string[] = []
  let cursor: string | undefined
  for (let pages = 1; pages <= 100; pages++) {
    const page = await store.list(prefix, { ...options, ...(cursor === undefined ? {} : { cursor }) })
    const entries = page.objects.length + page.prefixes.length
    if (options.limit !== undefined) expect(entries).toBeLessThanOrEqual(options.limit)
    objects.push(...page.objects.map((object) => object.key))
    prefixes.push(...page.prefixes)
    if (page.cursor === undefined) return { objects, prefixes, pages }
    expect(entries).toBeGreaterThan(0)
    cursor = page.cursor
  }
  throw new Error('listing did not end within 100 pages')
}

/** Deterministic pseudo-random bytes (xorshift), so a shifted or truncated copy cannot match by accident. */
function patternBytes(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length)
  let state = seed || 1
  for (let index = 0; index < length; index++) {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    bytes[index] = state & 0xff
  }
  return bytes
}

function sameBytes(actual: Uint8Array | undefined, expected: Uint8Array): boolean {
  if (!actual || actual.byteLength !== expected.byteLength) return false
  for (let index = 0; index < expected.byteLength; index++) {
    if (actual[index] !== expected[index]) return false
  }
  return true
}

function text(bytes: Uint8Array | undefined): string | undefined {
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes)
}

function streamOf(bytes: Uint8Array, chunkSize: number): ReadableStream<Uint8Array> {
  let offset = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) {
        controller.close()
        return
      }
      controller.enqueue(bytes.slice(offset, offset + chunkSize))
      offset += chunkSize
    },
  })
}

async function readAll(stream: ReadableStream<Uint8Array> | undefined): Promise<Uint8Array | undefined> {
  if (!stream) return undefined
  const chunks: Uint8Array[] = []
  const reader = stream.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
  }
  const bytes = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.byteLength, 0))
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}
