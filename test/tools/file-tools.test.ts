import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ObjectStore } from '../../src/storage/store'
import { type S3rverInstance, s3StorageFor, startS3rver } from '../support/s3rver'
import { startTestServer, type TestServer } from '../support/server'

// The same HTTP-level behaviour on the embedded fs driver and on S3 (s3rver), where folders are only prefixes.
describe.each(['fs', 's3'] as const)('file tools on %s storage', (driver) => {
  let server: TestServer
  let s3rver: S3rverInstance | undefined

  async function storageFor(): Promise<ObjectStore | undefined> {
    if (driver === 'fs') return undefined
    s3rver = await startS3rver()
    return s3StorageFor(s3rver)
  }

  beforeAll(async () => {
    const storage = await storageFor()
    server = await startTestServer({}, storage ? { storage } : {})
  })
  afterAll(async () => {
    await server.stop()
    await s3rver?.stop()
  })

  async function write(path: string, content: string, workspace = 'files') {
    const result = await server.call('write_file', { path, content }, { workspace })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    return result.body
  }

  async function read(path: string, workspace = 'files', range: Record<string, number> = {}) {
    return server.call('read_file', { path, ...range }, { workspace })
  }

  describe('write_file mode write and read_file', () => {
    it('creates a file with implied parent folders and reads it back exactly', async () => {
      const content = 'line one\nline two — ü 日本 🎉\n'
      const written = await write('deep/nested/folder/a.txt', content)
      expect(written).toEqual({
        path: 'deep/nested/folder/a.txt',
        bytes_written: new TextEncoder().encode(content).byteLength,
        mode: 'write',
        created: true,
      })
      const result = await read('deep/nested/folder/a.txt')
      expect(result.status).toBe(200)
      expect(result.body).toEqual({
        path: 'deep/nested/folder/a.txt',
        content,
        total_lines: 2,
        start_line: 1,
        end_line: 2,
        truncated: false,
      })
    })

    it('overwrites and reports created: false; normalizes ./ and // in paths', async () => {
      await write('over.txt', 'first')
      const again = await server.call('write_file', { path: './over.txt', content: 'second' }, { workspace: 'files' })
      expect(again.body).toMatchObject({ path: 'over.txt', created: false, bytes_written: 6 })
      expect((await read('over.txt')).body.content).toBe('second')
      expect((await read('.//over.txt')).body.content).toBe('second')
    })

    it('reads line ranges with 1-based inclusive bounds', async () => {
      await write('lines.txt', 'a\nb\nc\nd\ne')
      expect((await read('lines.txt', 'files', { start_line: 2, end_line: 4 })).body).toMatchObject({
        content: 'b\nc\nd\n',
        total_lines: 5,
        start_line: 2,
        end_line: 4,
      })
      expect((await read('lines.txt', 'files', { start_line: 5 })).body.content).toBe('e')
      expect((await read('lines.txt', 'files', { start_line: 4, end_line: 99 })).body.end_line).toBe(5)
      const past = await read('lines.txt', 'files', { start_line: 6 })
      expect(past.status).toBe(400)
      expect(past.body).toMatchObject({ code: 'validation', field: 'start_line' })
      const backwards = await read('lines.txt', 'files', { start_line: 3, end_line: 2 })
      expect(backwards.body).toMatchObject({ code: 'validation', field: 'end_line' })
    })

    it('reads an empty file', async () => {
      await write('empty.txt', '')
      expect((await read('empty.txt')).body).toMatchObject({ content: '', total_lines: 0, truncated: false })
    })

    it('answers not_found for a missing file and validation for a folder or a binary file', async () => {
      const missing = await read('nope.txt')
      expect(missing.status).toBe(404)
      expect(missing.body).toMatchObject({ code: 'not_found', status: 404 })
      expect(missing.headers.get('content-type')).toBe('application/problem+json')
      const folder = await read('deep')
      expect(folder.status).toBe(400)
      expect(folder.body.detail).toMatch(/folder/)
      await server.storage.put('tenants/default/workspaces/files/bin.dat', new Uint8Array([1, 0, 2, 3]))
      const binary = await read('bin.dat')
      expect(binary.status).toBe(400)
      expect(binary.body.detail).toMatch(/binary/)
    })

    it('refuses to write a file over a folder or under a file', async () => {
      await write('parent/child.txt', 'x')
      const overFolder = await server.call('write_file', { path: 'parent', content: 'y' }, { workspace: 'files' })
      expect(overFolder.status).toBe(409)
      const underFile = await server.call(
        'write_file',
        { path: 'parent/child.txt/x', content: 'y' },
        { workspace: 'files' },
      )
      expect(underFile.status).toBe(409)
      expect((await read('parent/child.txt')).body.content).toBe('x')
    })

    it('truncates long content under 100,000 characters with a hint to read a line range', async () => {
      const line = `${'x'.repeat(99)}\n`
      await write('big.txt', line.repeat(3000))
      const response = await fetch(`${server.url}/v1/tools/read_file?workspace=files`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ path: 'big.txt' }),
      })
      const text = await response.text()
      expect(text.length).toBeLessThanOrEqual(100_000)
      const body = JSON.parse(text)
      expect(body.truncated).toBe(true)
      expect(body.total_lines).toBe(3000)
      expect(body.content).toBe(line.repeat(body.end_line))
      expect(body.hint).toContain(`start_line ${body.end_line + 1}`)
      const next = await read('big.txt', 'files', { start_line: body.end_line + 1 })
      expect(next.body.content.startsWith('x')).toBe(true)
    })

    it('cuts a single enormous line and still stays under the limit, counting JSON escapes', async () => {
      await write('quotes.txt', '"\\'.repeat(200_000))
      const response = await fetch(`${server.url}/v1/tools/read_file?workspace=files`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ path: 'quotes.txt' }),
      })
      const text = await response.text()
      expect(text.length).toBeLessThanOrEqual(100_000)
      expect(JSON.parse(text)).toMatchObject({ truncated: true, start_line: 1, end_line: 1 })
    })
  })

  describe('write_file mode replace and patch', () => {
    it('replaces a unique match, and refuses absent or ambiguous ones without writing', async () => {
      await write('r.txt', 'alpha beta gamma beta')
      const unique = await server.call(
        'write_file',
        { path: 'r.txt', mode: 'replace', old_text: 'alpha', new_text: '$& $1' },
        { workspace: 'files' },
      )
      expect(unique.status).toBe(200)
      expect((await read('r.txt')).body.content).toBe('$& $1 beta gamma beta')
      const ambiguous = await server.call(
        'write_file',
        { path: 'r.txt', mode: 'replace', old_text: 'beta', new_text: 'x' },
        { workspace: 'files' },
      )
      expect(ambiguous.status).toBe(409)
      expect(ambiguous.body).toMatchObject({ code: 'conflict', matches: 2, field: 'old_text' })
      const absent = await server.call(
        'write_file',
        { path: 'r.txt', mode: 'replace', old_text: 'delta', new_text: 'x' },
        { workspace: 'files' },
      )
      expect(absent.status).toBe(404)
      expect((await read('r.txt')).body.content).toBe('$& $1 beta gamma beta')
    })

    it('counts overlapping matches: "aa" in "aaa" is ambiguous, and nothing is written', async () => {
      await write('overlap.txt', 'aaa')
      const overlapping = await server.call(
        'write_file',
        { path: 'overlap.txt', mode: 'replace', old_text: 'aa', new_text: 'X' },
        { workspace: 'files' },
      )
      expect(overlapping.status).toBe(409)
      expect(overlapping.body).toMatchObject({ code: 'conflict', matches: 2, field: 'old_text' })
      // The same for a search text long enough to take the long-search path.
      const long = 'ab'.repeat(200)
      await write('overlap-long.txt', `${long}ab`)
      const longOverlap = await server.call(
        'write_file',
        { path: 'overlap-long.txt', mode: 'replace', old_text: long, new_text: 'X' },
        { workspace: 'files' },
      )
      expect(longOverlap.status).toBe(409)
      expect((await read('overlap.txt')).body.content).toBe('aaa')
      expect((await read('overlap-long.txt')).body.content).toBe(`${long}ab`)
    })

    it('refuses a field of another mode instead of ignoring it, and writes nothing', async () => {
      await write('modes.txt', 'hello world\n')
      const attempts = [
        { body: { content: 'new\n', old_text: 'hello', new_text: 'bye' }, field: 'old_text' },
        { body: { mode: 'replace', old_text: 'hello', new_text: 'bye', content: 'new\n' }, field: 'content' },
        {
          body: {
            mode: 'replace',
            old_text: 'hello',
            new_text: 'bye',
            patches: [{ start_line: 1, end_line: 1, content: 'x' }],
          },
          field: 'patches',
        },
        {
          body: { mode: 'patch', patches: [{ start_line: 1, end_line: 1, content: 'x' }], content: 'new' },
          field: 'content',
        },
      ]
      for (const attempt of attempts) {
        const answer = await server.call('write_file', { path: 'modes.txt', ...attempt.body }, { workspace: 'files' })
        expect(answer.status, JSON.stringify(answer.body)).toBe(400)
        expect(answer.body.field).toBe(attempt.field)
        expect(answer.body.detail).toMatch(/belongs to mode/)
      }
      expect((await read('modes.txt')).body.content).toBe('hello world\n')
    })

    it('refuses to edit a file that is not UTF-8 throughout, leaving its bytes as they are', async () => {
      const root = 'tenants/default/workspaces/files'
      const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6c, 0x69, 0x6e, 0x65, 0x32, 0x0a]) // "café\nline2\n" in Latin-1
      await server.storage.put(`${root}/latin1.txt`, latin1)
      const calls: Array<[string, Record<string, unknown>]> = [
        ['apply_edit', { old_text: 'line2', new_text: 'LINE2' }],
        ['multi_edit', { edits: [{ old_text: 'line2', new_text: 'LINE2' }] }],
        ['write_file', { mode: 'replace', old_text: 'line2', new_text: 'LINE2' }],
        ['write_file', { mode: 'patch', patches: [{ start_line: 2, end_line: 2, content: 'LINE2\n' }] }],
      ]
      for (const [tool, input] of calls) {
        for (const query of ['', '&dry_run=true']) {
          const response = await fetch(`${server.url}/v1/tools/${tool}?workspace=files${query}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ path: 'latin1.txt', ...input }),
          })
          const answer = await response.json()
          expect(response.status, `${tool}${query} ${JSON.stringify(answer)}`).toBe(400)
          expect(answer).toMatchObject({ code: 'validation', field: 'path' })
          expect(answer.detail).toMatch(/not UTF-8/)
        }
      }
      const stored = await server.storage.get(`${root}/latin1.txt`)
      expect(Buffer.from(stored?.body ?? []).equals(Buffer.from(latin1))).toBe(true)
      // Overwriting it whole is still possible, and so is reading it.
      expect((await read('latin1.txt')).status).toBe(200)
      expect(
        (await server.call('write_file', { path: 'latin1.txt', content: 'café\n' }, { workspace: 'files' })).status,
      ).toBe(200)
    })

    it('refuses a file path that ends in "/", which names a folder, for writing and reading alike', async () => {
      for (const [tool, input] of [
        ['write_file', { path: 'newdir/', content: 'x' }],
        ['write_file', { path: 'newdir/.', content: 'x' }],
        ['read_file', { path: 'newdir/' }],
        ['apply_edit', { path: 'newdir/', old_text: 'a', new_text: 'b' }],
      ] as const) {
        const answer = await server.call(tool, input, { workspace: 'files' })
        expect(answer.status, `${tool} ${JSON.stringify(answer.body)}`).toBe(400)
        expect(answer.body).toMatchObject({ code: 'validation', field: 'path' })
        expect(answer.body.detail).toMatch(/names a folder/)
      }
      expect((await read('newdir')).status).toBe(404)
    })

    it('requires the fields of each mode', async () => {
      const noOld = await server.call(
        'write_file',
        { path: 'r.txt', mode: 'replace', new_text: 'x' },
        { workspace: 'files' },
      )
      expect(noOld.status).toBe(400)
      expect(noOld.body.field).toBe('old_text')
      const noContent = await server.call('write_file', { path: 'r.txt' }, { workspace: 'files' })
      expect(noContent.body.field).toBe('content')
      const noPatches = await server.call('write_file', { path: 'r.txt', mode: 'patch' }, { workspace: 'files' })
      expect(noPatches.body.field).toBe('patches')
      const badMode = await server.call(
        'write_file',
        { path: 'r.txt', mode: 'append', content: 'x' },
        { workspace: 'files' },
      )
      expect(badMode.body.field).toBe('mode')
    })

    it('applies patches bottom-up against original line numbers, with insertion and deletion', async () => {
      await write('p.txt', 'one\ntwo\nthree\nfour\nfive\n')
      const result = await server.call(
        'write_file',
        {
          path: 'p.txt',
          mode: 'patch',
          patches: [
            { start_line: 1, end_line: 1, content: 'ONE' },
            { start_line: 4, end_line: 5, content: '' },
            { start_line: 3, end_line: 2, content: 'inserted\nlines\n' },
            { start_line: 6, end_line: 5, content: 'appended' },
          ],
        },
        { workspace: 'files' },
      )
      expect(result.status, JSON.stringify(result.body)).toBe(200)
      expect((await read('p.txt')).body.content).toBe('ONE\ntwo\ninserted\nlines\nthree\nappended\n')
    })

    it('keeps CRLF line endings and a missing final newline', async () => {
      await write('crlf.txt', 'a\r\nb\r\nc')
      await server.call(
        'write_file',
        { path: 'crlf.txt', mode: 'patch', patches: [{ start_line: 2, end_line: 2, content: 'B\nB2' }] },
        { workspace: 'files' },
      )
      expect((await read('crlf.txt')).body.content).toBe('a\r\nB\r\nB2\r\nc')
      await server.call(
        'write_file',
        { path: 'crlf.txt', mode: 'patch', patches: [{ start_line: 4, end_line: 4, content: 'C' }] },
        { workspace: 'files' },
      )
      expect((await read('crlf.txt')).body.content).toBe('a\r\nB\r\nB2\r\nC')
    })

    it('applies one patch of 300,000 lines (once refused as nesting too deeply)', async () => {
      await write('long.txt', 'head\nmiddle\ntail\n')
      const lines = Array.from({ length: 300_000 }, (_, index) => `line ${index}`)
      const result = await server.call(
        'write_file',
        { path: 'long.txt', mode: 'patch', patches: [{ start_line: 2, end_line: 2, content: lines.join('\n') }] },
        { workspace: 'files' },
      )
      expect(result.status, JSON.stringify(result.body).slice(0, 300)).toBe(200)
      const stored = await server.storage.get('tenants/default/workspaces/files/long.txt')
      expect(new TextDecoder().decode(stored?.body)).toBe(`head\n${lines.join('\n')}\ntail\n`)
    })

    it('rejects overlapping and out-of-range patches and leaves the file unchanged', async () => {
      await write('o.txt', '1\n2\n3\n4\n')
      const overlap = await server.call(
        'write_file',
        {
          path: 'o.txt',
          mode: 'patch',
          patches: [
            { start_line: 1, end_line: 2, content: 'x' },
            { start_line: 2, end_line: 3, content: 'y' },
          ],
        },
        { workspace: 'files' },
      )
      expect(overlap.status).toBe(400)
      expect(overlap.body.detail).toMatch(/overlap/)
      const outside = await server.call(
        'write_file',
        { path: 'o.txt', mode: 'patch', patches: [{ start_line: 2, end_line: 9, content: 'x' }] },
        { workspace: 'files' },
      )
      expect(outside.status).toBe(400)
      expect(outside.body.field).toBe('patches.0.end_line')
      const missing = await server.call(
        'write_file',
        { path: 'none.txt', mode: 'patch', patches: [{ start_line: 1, end_line: 1, content: 'x' }] },
        { workspace: 'files' },
      )
      expect(missing.status).toBe(404)
      expect((await read('o.txt')).body.content).toBe('1\n2\n3\n4\n')
    })
  })

  describe('a file and a folder of one name', () => {
    it('never lets concurrent write_file x and write_file x/y both succeed', async () => {
      for (let round = 0; round < 10; round++) {
        const x = `race${round}/x`
        const calls = [
          server.call('write_file', { path: x, content: 'file' }, { workspace: 'race' }),
          server.call('write_file', { path: `${x}/y`, content: 'folder' }, { workspace: 'race' }),
        ]
        if (round % 2) calls.reverse()
        const answers = await Promise.all(calls)
        const statuses = answers.map((answer) => answer.status).sort()
        expect(statuses, `round ${round}: ${JSON.stringify(answers.map((answer) => answer.body))}`).not.toEqual([
          200, 200,
        ])
        for (const answer of answers) if (answer.status !== 200) expect(answer.body.code).toBe('conflict')
      }
      // What is stored is a tree: every path lists as either a file or a folder, never both.
      const listed = await server.call('list_files', { recursive: true }, { workspace: 'race' })
      const files = new Set(
        listed.body.entries
          .filter((entry: { type: string }) => entry.type === 'file')
          .map((entry: { path: string }) => entry.path),
      )
      const folders = listed.body.entries
        .filter((entry: { type: string }) => entry.type === 'dir')
        .map((entry: { path: string }) => entry.path)
      expect(folders.filter((folder: string) => files.has(folder))).toEqual([])
    })
  })

  describe('apply_edit, multi_edit and revert_edit', () => {
    it('apply_edit replaces only the first occurrence and reports its line', async () => {
      await write('e.txt', 'keep\nfoo\nfoo\n')
      const result = await server.call(
        'apply_edit',
        { path: 'e.txt', old_text: 'foo', new_text: 'bar' },
        { workspace: 'files' },
      )
      expect(result.body).toMatchObject({ path: 'e.txt', line: 2 })
      expect((await read('e.txt')).body.content).toBe('keep\nbar\nfoo\n')
    })

    it('revert_edit puts the original text back', async () => {
      await server.call('revert_edit', { path: 'e.txt', old_text: 'bar', new_text: 'foo' }, { workspace: 'files' })
      expect((await read('e.txt')).body.content).toBe('keep\nfoo\nfoo\n')
    })

    it('multi_edit applies edits in sequence, each seeing the previous result', async () => {
      await write('m.txt', 'a b c')
      const result = await server.call(
        'multi_edit',
        {
          path: 'm.txt',
          edits: [
            { old_text: 'a', new_text: 'x' },
            { old_text: 'x b', new_text: 'y' },
            { old_text: 'c', new_text: 'z' },
          ],
        },
        { workspace: 'files' },
      )
      expect(result.body).toMatchObject({ edits_applied: 3, bytes_written: 3 })
      expect((await read('m.txt')).body.content).toBe('y z')
    })

    it('multi_edit is all or nothing: a failing edit leaves the file byte-for-byte unchanged', async () => {
      await write('atomic.txt', 'one two three')
      const before = await server.storage.head('tenants/default/workspaces/files/atomic.txt')
      const result = await server.call(
        'multi_edit',
        {
          path: 'atomic.txt',
          edits: [
            { old_text: 'one', new_text: '1' },
            { old_text: 'two', new_text: '2' },
            { old_text: 'four', new_text: '4' },
          ],
        },
        { workspace: 'files' },
      )
      expect(result.status).toBe(404)
      expect(result.body).toMatchObject({ code: 'not_found', field: 'edits.2.old_text' })
      expect(result.body.detail).toMatch(/nothing was written/)
      expect((await read('atomic.txt')).body.content).toBe('one two three')
      const after = await server.storage.head('tenants/default/workspaces/files/atomic.txt')
      expect(after?.etag).toBe(before?.etag)
    })

    it('concurrent edits of one file never lose one: a lost race is retried on the new version, so all land', async () => {
      const lines = Array.from({ length: 16 }, (_, index) => `line${index}\n`)
      await write('race.txt', lines.join(''))
      const outcomes: Array<{ index: number; status: number; code?: string }> = []
      for (let batch = 0; batch < 16; batch += 4) {
        const results = await Promise.all(
          [0, 1, 2, 3].map((offset) =>
            server.call(
              'apply_edit',
              { path: 'race.txt', old_text: `line${batch + offset}\n`, new_text: `EDITED${batch + offset}\n` },
              { workspace: 'files' },
            ),
          ),
        )
        results.forEach((result, offset) => {
          outcomes.push({ index: batch + offset, status: result.status, code: result.body.code })
        })
      }
      const content = (await read('race.txt')).body.content as string
      // The edits touch different lines: each still applies after another landed, so none is refused.
      for (const outcome of outcomes) {
        expect(outcome.status, JSON.stringify(outcome)).toBe(200)
        expect(content).toContain(`EDITED${outcome.index}\n`)
      }
    })

    it('refuses empty old_text and missing files', async () => {
      const empty = await server.call(
        'apply_edit',
        { path: 'e.txt', old_text: '', new_text: 'x' },
        { workspace: 'files' },
      )
      expect(empty.status).toBe(400)
      expect(empty.body.field).toBe('old_text')
      const missing = await server.call(
        'apply_edit',
        { path: 'missing.txt', old_text: 'a', new_text: 'b' },
        { workspace: 'files' },
      )
      expect(missing.status).toBe(404)
      const none = await server.call('multi_edit', { path: 'e.txt', edits: [] }, { workspace: 'files' })
      expect(none.body.field).toBe('edits')
    })
  })

  describe('delete_file and list_files', () => {
    it('lists a folder with types and sizes, recursively, and with a glob', async () => {
      await write('a.md', '# a', 'list')
      await write('src/index.ts', 'export {}', 'list')
      await write('src/lib/util.ts', '1', 'list')
      await write('src/lib/readme.md', '22', 'list')
      const top = await server.call('list_files', {}, { workspace: 'list' })
      expect(
        top.body.entries.map((entry: { path: string; type: string }) => `${entry.type}:${entry.path}`).sort(),
      ).toEqual(['dir:src', 'file:a.md'])
      expect(top.body.entries.find((entry: { name: string }) => entry.name === 'a.md')).toMatchObject({
        size: 3,
        type: 'file',
      })
      const deep = await server.call('list_files', { path: 'src', recursive: true }, { workspace: 'list' })
      expect(deep.body.entries.map((entry: { path: string }) => entry.path).sort()).toEqual([
        'src/index.ts',
        'src/lib',
        'src/lib/readme.md',
        'src/lib/util.ts',
      ])
      const globbed = await server.call('list_files', { recursive: true, glob: '*.ts' }, { workspace: 'list' })
      expect(globbed.body.entries.map((entry: { path: string }) => entry.path).sort()).toEqual([
        'src/index.ts',
        'src/lib/util.ts',
      ])
      const pathGlob = await server.call('list_files', { recursive: true, glob: 'src/**/*.md' }, { workspace: 'list' })
      expect(pathGlob.body.entries.map((entry: { path: string }) => entry.path)).toEqual(['src/lib/readme.md'])
      const limited = await server.call('list_files', { recursive: true, limit: 2 }, { workspace: 'list' })
      expect(limited.body).toMatchObject({ truncated: true })
      expect(limited.body.entries).toHaveLength(2)
    })

    it('lists an empty workspace root, 404s a missing folder and refuses a file', async () => {
      expect((await server.call('list_files', { path: '' }, { workspace: 'fresh' })).body).toEqual({
        path: '',
        entries: [],
        truncated: false,
      })
      expect((await server.call('list_files', { path: 'nope' }, { workspace: 'list' })).status).toBe(404)
      expect((await server.call('list_files', { path: 'a.md' }, { workspace: 'list' })).status).toBe(400)
      expect((await server.call('list_files', { glob: '[', recursive: true }, { workspace: 'list' })).status).toBe(400)
    })

    it('deletes a file, succeeds when it is missing, refuses a folder', async () => {
      expect((await server.call('delete_file', { path: 'a.md' }, { workspace: 'list' })).body).toEqual({
        path: 'a.md',
        deleted: true,
      })
      expect((await read('a.md', 'list')).status).toBe(404)
      expect((await server.call('delete_file', { path: 'a.md' }, { workspace: 'list' })).body).toEqual({
        path: 'a.md',
        deleted: false,
      })
      const folder = await server.call('delete_file', { path: 'src' }, { workspace: 'list' })
      expect(folder.status).toBe(400)
      expect((await read('src/index.ts', 'list')).status).toBe(200)
    })

    it('a folder disappears with its last file', async () => {
      await server.call('delete_file', { path: 'src/lib/util.ts' }, { workspace: 'list' })
      await server.call('delete_file', { path: 'src/lib/readme.md' }, { workspace: 'list' })
      const listing = await server.call('list_files', { path: 'src' }, { workspace: 'list' })
      expect(listing.body.entries.map((entry: { path: string }) => entry.path)).toEqual(['src/index.ts'])
    })
  })

  describe('size limits', () => {
    it('refuses a file over TOOLPORT_MAX_FILE_BYTES with 413 size_exceeded and writes nothing', async () => {
      const small = await startTestServer({ TOOLPORT_MAX_FILE_BYTES: '1000' }, { storage: server.storage })
      try {
        const call = (tool: string, input: unknown) => small.call(tool, input, { workspace: 'small' })
        const big = await call('write_file', { path: 'big.txt', content: 'x'.repeat(1001) })
        expect(big.status).toBe(413)
        expect(big.body).toMatchObject({ code: 'size_exceeded', limit: 1000 })
        expect((await call('read_file', { path: 'big.txt' })).status).toBe(404)
        await call('write_file', { path: 'ok.txt', content: 'x'.repeat(1000) })
        const grow = await call('apply_edit', { path: 'ok.txt', old_text: 'x', new_text: 'yy' })
        expect(grow.status).toBe(413)
        await small.storage.put('tenants/default/workspaces/small/huge.txt', 'z'.repeat(5000))
        expect((await call('read_file', { path: 'huge.txt' })).status).toBe(413)
      } finally {
        await small.stop()
      }
    })
  })
})
