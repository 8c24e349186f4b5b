import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createFsStorage } from '../../src/storage/fs'
import { freePort } from '../support/ports'
import { s3StorageFor, startS3rver } from '../support/s3rver'
import { startTestServer, type TestServer } from '../support/server'

const sha = (text: string) => createHash('sha256').update(text).digest('hex')

/** Reads every file back and compares it with what the clients were told was stored. */
async function checksumPass(server: TestServer, workspace: string, expected: Map<string, string[]>) {
  for (const [path, acceptable] of expected) {
    const read = await server.call('read_file', { path }, { workspace })
    expect(read.status, path).toBe(200)
    expect(acceptable.map(sha), path).toContain(sha(read.body.content))
  }
}

describe('storage outage (S3 stops mid-run)', () => {
  it('answers 503 with Retry-After, never shows a partial object, and recovers when S3 returns', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'toolport-s3-outage-'))
    const port = await freePort()
    let s3 = await startS3rver({ port, directory })
    const storage = s3StorageFor(s3, { maxAttempts: 1 })
    const server = await startTestServer({}, { storage })
    try {
      const expected = new Map<string, string[]>()
      for (let index = 0; index < 8; index++) {
        const content = `version one of file ${index}\n`.repeat(100)
        expect(
          (await server.call('write_file', { path: `f${index}.txt`, content }, { workspace: 'outage' })).status,
        ).toBe(200)
        expected.set(`f${index}.txt`, [content])
      }
      const second = (index: number) => `version two of file ${index} `.repeat(60_000)
      const writes = Array.from({ length: 8 }, (_, index) =>
        server.call('write_file', { path: `f${index}.txt`, content: second(index) }, { workspace: 'outage' }),
      )
      await new Promise((resolve) => setTimeout(resolve, 30))
      await s3.stop()
      const results = await Promise.all(writes)
      results.forEach((result, index) => {
        const path = `f${index}.txt`
        if (result.status === 200) expected.set(path, [second(index)])
        else {
          expect(result.status, JSON.stringify(result.body)).toBe(503)
          expect(result.body.code).toBe('unavailable')
          expect(result.headers.get('retry-after')).toBeTruthy()
          // The write may have landed before the connection broke: old or new, never a mix.
          expected.set(path, [...(expected.get(path) ?? []), second(index)])
        }
      })
      const down = await server.call('read_file', { path: 'f0.txt' }, { workspace: 'outage' })
      expect(down.status).toBe(503)
      expect(down.headers.get('retry-after')).toBe('5')
      expect(JSON.stringify(down.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|s3rver/i)
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503)

      s3 = await startS3rver({ port, directory })
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
      await checksumPass(server, 'outage', expected)
      expect(
        (await server.call('write_file', { path: 'after.txt', content: 'back' }, { workspace: 'outage' })).status,
      ).toBe(200)
    } finally {
      await server.stop()
      await s3.stop()
      await rm(directory, { recursive: true, force: true })
    }
  })
})

describe.skipIf(process.getuid?.() !== 0)('a full disk in the data folder', () => {
  it('answers 503 "storage is full", keeps every earlier file intact, and works again once space is freed', async () => {
    const mountPoint = await mkdtemp(join(tmpdir(), 'toolport-full-'))
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mountPoint])
    try {
      await mkdir(join(mountPoint, 'data'))
      const server = await startTestServer({}, { storage: await createFsStorage({ root: join(mountPoint, 'data') }) })
      try {
        const expected = new Map<string, string[]>()
        let full: Awaited<ReturnType<TestServer['call']>> | undefined
        for (let index = 0; index < 40 && !full; index++) {
          const content = `${index}`.padEnd(60_000, '.')
          const result = await server.call('write_file', { path: `fill/${index}.txt`, content })
          if (result.status === 200) expected.set(`fill/${index}.txt`, [content])
          else full = result
        }
        expect(full?.status).toBe(503)
        expect(full?.body).toMatchObject({ code: 'unavailable', detail: 'Storage is full.' })
        // Overwriting an existing file with more data than fits must leave the old version whole.
        const overwrite = await server.call('write_file', { path: 'fill/0.txt', content: 'x'.repeat(400_000) })
        expect(overwrite.status).toBe(503)
        await checksumPass(server, 'default', expected)
        for (const path of [...expected.keys()].slice(0, 3)) {
          await server.call('delete_file', { path })
          expected.delete(path)
        }
        expect((await server.call('write_file', { path: 'fill/again.txt', content: 'room again' })).status).toBe(200)
        await checksumPass(server, 'default', expected)
      } finally {
        await server.stop()
      }
    } finally {
      execFileSync('umount', [mountPoint])
      await rm(mountPoint, { recursive: true, force: true })
    }
  })
})
