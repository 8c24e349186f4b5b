import { execFileSync, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolError } from '../../src/core/errors'
import { createWorkspaceMirrors, type MirrorOptions, type WorkspaceMirrors } from '../../src/sandbox/mirror/mirror'
import { createFsStorage } from '../../src/storage/fs'
import type { ObjectStore } from '../../src/storage/store'
import { mirrorDrivers, useMirrorSuite } from '../support/mirror-suite'
import { type S3rverInstance, s3StorageFor, startS3rver } from '../support/s3rver'
import { startTestServer, type TestServer } from '../support/server'

// The workspace copies of the sandbox: first the mirror itself (checkout, commit, locks, healing) on fs
// and S3 storage, then the whole round trip through execute_command, then the process executor's.

const binary = Uint8Array.from({ length: 256 }, (_, index) => index)
const latin1 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('latin1')
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const isRoot = process.getuid?.() === 0

/** Rejects when promise does not settle in time, so a lock that never opens fails clearly. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, delay(ms).then(() => Promise.reject(new Error(`did not settle within ${ms} ms`)))])
}

/**
 * Counts workspace downloads at the storage level, independently of what the mirror reports (the
 * quota's usage record, outside the workspace, is not one).
 */
function counting(storage: ObjectStore): { storage: ObjectStore; downloads: () => number } {
  let downloads = 0
  const count = (key: string) => {
    if (!key.endsWith('/usage.json')) downloads++
  }
  return {
    storage: {
      ...storage,
      getStream: (key) => {
        count(key)
        return storage.getStream(key)
      },
      get: (key) => {
        count(key)
        return storage.get(key)
      },
    },
    downloads: () => downloads,
  }
}

describe.each(mirrorDrivers)('workspace mirrors on $name storage', ({ setup }) => {
  const suite = useMirrorSuite(setup, 'toolport-mirror-test')
  const { open, storage } = suite

  /** A fresh workspace prefix and mirror root per test. */
  async function fixture(options: Partial<MirrorOptions> = {}) {
    const id = randomUUID().slice(0, 8)
    const prefix = `tenants/t1/workspaces/ws-${id}/`
    const root = join(suite.scratch(), `mirrors-${id}`)
    const mirrorOptions: MirrorOptions = { root, maxFileBytes: 1024 * 1024, ...options }
    const mirrors = createWorkspaceMirrors(mirrorOptions)
    const checkout = async (on: ObjectStore = storage(), using: WorkspaceMirrors = mirrors) => {
      const result = await using.checkout(on, prefix)
      open.push(result)
      return result
    }
    const seed = async (files: Record<string, string | Uint8Array>) => {
      for (const [path, body] of Object.entries(files)) await storage().put(prefix + path, body)
    }
    const stored = async (): Promise<Record<string, string>> => {
      const tree: Record<string, string> = {}
      let cursor: string | undefined
      do {
        const page = await storage().list(prefix, cursor === undefined ? {} : { cursor })
        for (const object of page.objects) {
          const found = await storage().get(object.key)
          if (found) tree[object.key.slice(prefix.length)] = latin1(found.body)
        }
        cursor = page.cursor
      } while (cursor)
      return tree
    }
    return { prefix, root, mirrors, mirrorOptions, checkout, seed, stored }
  }

  it('materializes nested, binary, empty and unusually named files exactly', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({
      'README.md': '# hello\n',
      'src/lib/deep/index.ts': 'export const x = 1\n',
      'data/bytes.bin': binary,
      'empty.txt': '',
      'with space.txt': 'spaced',
      'ü/日本.txt': 'unicode',
      'emoji 😀.txt': 'emoji',
    })
    const run = await checkout()
    expect(run.downloaded).toBe(7)
    expect(await localTree(run.dir)).toEqual(await stored())
    expect(await readFile(join(run.dir, 'data/bytes.bin'))).toEqual(Buffer.from(binary))
    expect((await lstat(join(run.dir, 'empty.txt'))).size).toBe(0)
    // Nothing of the bookkeeping is visible to the sandbox.
    expect(await readdir(run.dir)).not.toContain('manifest.json')
  })

  it('materializes an empty workspace as an empty folder', async () => {
    const { checkout } = await fixture()
    const run = await checkout()
    expect(run.downloaded).toBe(0)
    expect(await readdir(run.dir)).toEqual([])
  })

  it('downloads nothing on a second checkout of an unchanged workspace', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'a.txt': 'a', 'b/c.txt': 'c', 'b/d/e.bin': binary })
    const first = await checkout()
    await first.release()
    const counted = counting(storage())
    const second = await checkout(counted.storage)
    expect(second.downloaded).toBe(0)
    expect(counted.downloads()).toBe(0)
    expect(second.dir).toBe(first.dir)
    expect(await localTree(second.dir)).toEqual(await stored())
  })

  it('re-downloads only the file that changed in storage between checkouts', async () => {
    const { checkout, seed, prefix } = await fixture()
    await seed({ 'same.txt': 'unchanged', 'changed.txt': 'old' })
    const first = await checkout()
    const sameInode = (await lstat(join(first.dir, 'same.txt'))).ino
    await first.release()
    await storage().put(`${prefix}changed.txt`, 'new content')
    const counted = counting(storage())
    const second = await checkout(counted.storage)
    expect(second.downloaded).toBe(1)
    expect(counted.downloads()).toBe(1)
    expect(await readFile(join(second.dir, 'changed.txt'), 'utf8')).toBe('new content')
    expect((await lstat(join(second.dir, 'same.txt'))).ino).toBe(sameInode)
  })

  it('sees same-size rewrites, deletions and additions made in storage between runs', async () => {
    const { checkout, seed, prefix, stored } = await fixture()
    await seed({ 'same-size.txt': 'aaaa', 'deleted.txt': 'd', 'kept/x.txt': 'x' })
    const first = await checkout()
    expect(await first.commit()).toEqual({ changes: [], skipped: [] })
    await first.release()
    // Another writer (the write_file tool, another instance) between two runs of this process.
    await storage().put(`${prefix}same-size.txt`, 'bbbb')
    await storage().delete(`${prefix}deleted.txt`)
    await storage().put(`${prefix}added/new.txt`, 'new')
    const second = await checkout()
    expect(second.downloaded).toBe(2)
    expect(await localTree(second.dir)).toEqual(await stored())
    expect(await localTree(second.dir)).toEqual({ 'same-size.txt': 'bbbb', 'kept/x.txt': 'x', 'added/new.txt': 'new' })
  })

  it('writes the manifest only when it changes, and re-reads one replaced on disk', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'a.txt': 'a', 'b/c.txt': 'c' })
    const first = await checkout()
    await first.commit()
    await first.release()
    const manifestPath = join(dirname(first.dir), 'manifest.json')
    const written = await lstat(manifestPath, { bigint: true })
    const unchanged = await checkout()
    expect(await unchanged.commit()).toEqual({ changes: [], skipped: [] })
    await unchanged.release()
    const after = await lstat(manifestPath, { bigint: true })
    expect({ ino: after.ino, mtime: after.mtimeNs }).toEqual({ ino: written.ino, mtime: written.mtimeNs })
    // A change made by the run is recorded on disk, so a restarted service still trusts the files.
    const run = await checkout()
    await writeFile(join(run.dir, 'b/c.txt'), 'changed by the run')
    await run.commit()
    await run.release()
    const saved = JSON.parse(await readFile(manifestPath, 'utf8')) as { files: Record<string, unknown> }
    expect(Object.keys(saved.files).sort()).toEqual(['a.txt', 'b/c.txt'])
    expect((await lstat(manifestPath, { bigint: true })).ino).not.toBe(written.ino)
    // A manifest emptied on disk is believed over the copy in memory: every file is fetched again.
    await writeFile(manifestPath, JSON.stringify({ version: 1, prefix: 'other/', files: {} }))
    const reread = await checkout()
    expect(reread.downloaded).toBe(2)
    expect(await localTree(reread.dir)).toEqual(await stored())
  })

  it('heals local tampering between runs', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'a.txt': 'original', 'b.txt': 'b', 'c.txt': 'c', 'folder/d.txt': 'd' })
    const first = await checkout()
    await first.release()
    const dir = first.dir
    await writeFile(join(dir, 'a.txt'), 'tampered')
    // Same size, timestamps put back to the nanosecond: only ctime still tells the edit apart.
    const times = join(suite.scratch(), `times-${randomUUID()}`)
    await writeFile(times, '')
    execFileSync('touch', ['-r', join(dir, 'b.txt'), times])
    await writeFile(join(dir, 'b.txt'), 'B')
    execFileSync('touch', ['-r', times, join(dir, 'b.txt')])
    await writeFile(join(dir, 'stray.txt'), 'not in storage')
    await mkdir(join(dir, 'stray-dir/nested'), { recursive: true })
    await writeFile(join(dir, 'stray-dir/nested/x.txt'), 'x')
    await symlink('/etc/passwd', join(dir, 'link'))
    await rm(join(dir, 'c.txt'))
    await mkdir(join(dir, 'c.txt'))
    await writeFile(join(dir, 'c.txt/inside.txt'), 'a folder where a file belongs')
    await rm(join(dir, 'folder'), { recursive: true })
    await writeFile(join(dir, 'folder'), 'a file where a folder belongs')
    execFileSync('mkfifo', [join(dir, 'pipe')])
    const second = await checkout()
    expect(second.downloaded).toBe(4)
    expect(await localTree(second.dir)).toEqual(await stored())
  })

  it('uploads a same-size edit whose mtime was put back, and a file only touched', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'same.txt': 'aaaa', 'untouched.txt': 'u', 'touched.txt': 't' })
    const run = await checkout()
    const times = join(suite.scratch(), `times-${randomUUID()}`)
    await writeFile(times, '')
    execFileSync('touch', ['-r', join(run.dir, 'same.txt'), times])
    await writeFile(join(run.dir, 'same.txt'), 'bbbb')
    execFileSync('touch', ['-r', times, join(run.dir, 'same.txt')])
    // Only the time changes: uploaded again (same bytes), as the scan never reads content to compare.
    execFileSync('touch', ['-d', '2001-01-01', join(run.dir, 'touched.txt')])
    const result = await run.commit()
    expect(result.changes).toEqual([
      { path: 'same.txt', change: 'modified', size: 4 },
      { path: 'touched.txt', change: 'modified', size: 1 },
    ])
    expect(await stored()).toEqual({ 'same.txt': 'bbbb', 'untouched.txt': 'u', 'touched.txt': 't' })
  })

  it('reports added, modified and deleted files and writes them to storage', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'keep.txt': 'keep', 'edit.txt': 'before', 'gone.txt': 'bye', x: 'was a file' })
    const run = await checkout()
    await writeFile(join(run.dir, 'edit.txt'), 'after, and longer')
    await rm(join(run.dir, 'gone.txt'))
    await mkdir(join(run.dir, 'new/nested'), { recursive: true })
    await writeFile(join(run.dir, 'new/nested/file.bin'), binary)
    await writeFile(join(run.dir, 'new/empty.txt'), '')
    // A file turned into a folder: the old key must go before the new ones can land (fs storage).
    await rm(join(run.dir, 'x'))
    await mkdir(join(run.dir, 'x'))
    await writeFile(join(run.dir, 'x/y.txt'), 'now a folder')
    const result = await run.commit()
    expect(result).toEqual({
      changes: [
        { path: 'edit.txt', change: 'modified', size: 17 },
        { path: 'gone.txt', change: 'deleted' },
        { path: 'new/empty.txt', change: 'added', size: 0 },
        { path: 'new/nested/file.bin', change: 'added', size: 256 },
        { path: 'x', change: 'deleted' },
        { path: 'x/y.txt', change: 'added', size: 12 },
      ],
      skipped: [],
    })
    expect(await stored()).toEqual({
      'keep.txt': 'keep',
      'edit.txt': 'after, and longer',
      'new/empty.txt': '',
      'new/nested/file.bin': latin1(binary),
      'x/y.txt': 'now a folder',
    })
    // Nothing new since: a second commit is empty, and the next checkout trusts what was uploaded.
    expect(await run.commit()).toEqual({ changes: [], skipped: [] })
    await run.release()
    const next = await checkout()
    expect(next.downloaded).toBe(0)
    expect(await localTree(next.dir)).toEqual(await stored())
  })

  it('deletes the objects of a folder removed in the mirror', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'docs/a.md': 'a', 'docs/sub/b.md': 'b', 'docs/sub/deeper/c.md': 'c', 'keep.txt': 'k' })
    const run = await checkout()
    await rm(join(run.dir, 'docs'), { recursive: true })
    const result = await run.commit()
    expect(result.changes).toEqual([
      { path: 'docs/a.md', change: 'deleted' },
      { path: 'docs/sub/b.md', change: 'deleted' },
      { path: 'docs/sub/deeper/c.md', change: 'deleted' },
    ])
    expect(await stored()).toEqual({ 'keep.txt': 'k' })
  })

  it('never follows symbolic links into files or folders outside the mirror', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'tracked.txt': 'tracked' })
    const outside = await mkdtemp(join(suite.scratch(), 'outside-'))
    await writeFile(join(outside, 'secret.txt'), 'TOP SECRET')
    const run = await checkout()
    await symlink('/etc/passwd', join(run.dir, 'passwd'))
    await symlink(join(outside, 'secret.txt'), join(run.dir, 'secret-link.txt'))
    await symlink(outside, join(run.dir, 'linked-dir'))
    // A tracked file replaced by a link: the stored file is deleted, the link is not uploaded.
    await rm(join(run.dir, 'tracked.txt'))
    await symlink(join(outside, 'secret.txt'), join(run.dir, 'tracked.txt'))
    await writeFile(join(run.dir, 'ok.txt'), 'fine')
    const result = await run.commit()
    expect(result.changes).toEqual([
      { path: 'ok.txt', change: 'added', size: 4 },
      { path: 'tracked.txt', change: 'deleted' },
    ])
    const reason = 'symbolic link (not followed)'
    expect(result.skipped).toEqual([
      { path: 'linked-dir', reason },
      { path: 'passwd', reason },
      { path: 'secret-link.txt', reason },
      { path: 'tracked.txt', reason },
    ])
    const tree = await stored()
    expect(tree).toEqual({ 'ok.txt': 'fine' })
    expect(JSON.stringify(tree)).not.toContain('TOP SECRET')
    // The link target is untouched, and the next checkout clears the links away.
    await run.release()
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET')
    const next = await checkout()
    expect(await localTree(next.dir)).toEqual({ 'ok.txt': 'fine' })
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET')
  })

  it('skips a fifo without hanging', async () => {
    const { checkout, stored } = await fixture()
    const run = await checkout()
    execFileSync('mkfifo', [join(run.dir, 'pipe')])
    await writeFile(join(run.dir, 'file.txt'), 'data')
    const result = await within(run.commit(), 10_000)
    expect(result.skipped).toEqual([{ path: 'pipe', reason: 'not a regular file' }])
    expect(await stored()).toEqual({ 'file.txt': 'data' })
  })

  it('skips files larger than maxFileBytes and keeps the stored version', async () => {
    const { checkout, seed, stored } = await fixture({ maxFileBytes: 1024 })
    await seed({ 'doc.txt': 'small' })
    const run = await checkout()
    await writeFile(join(run.dir, 'big.bin'), Buffer.alloc(2000, 1))
    await writeFile(join(run.dir, 'doc.txt'), Buffer.alloc(1025, 2))
    await writeFile(join(run.dir, 'limit.bin'), Buffer.alloc(1024, 3))
    const result = await run.commit()
    expect(result.changes).toEqual([{ path: 'limit.bin', change: 'added', size: 1024 }])
    expect(result.skipped).toEqual([
      { path: 'big.bin', reason: 'larger than 1024 bytes' },
      { path: 'doc.txt', reason: 'larger than 1024 bytes' },
    ])
    expect(await stored()).toEqual({ 'doc.txt': 'small', 'limit.bin': latin1(Buffer.alloc(1024, 3)) })
  })

  it('skips names that are not allowed in a workspace', async () => {
    const { checkout, stored } = await fixture()
    const run = await checkout()
    await writeFile(join(run.dir, 'back\\slash.txt'), 'backslash')
    await writeFile(join(run.dir, 'line\nbreak.txt'), 'control character')
    await mkdir(join(run.dir, 'bad\\folder'))
    await writeFile(join(run.dir, 'bad\\folder', 'inside.txt'), 'under a bad folder')
    await writeFile(Buffer.concat([Buffer.from(`${run.dir}/`), Buffer.from([0x66, 0xff, 0x66])]), 'not UTF-8')
    await writeFile(join(run.dir, 'fine.txt'), 'fine')
    const result = await run.commit()
    expect(result.changes).toEqual([{ path: 'fine.txt', change: 'added', size: 4 }])
    const reason = 'name not allowed in a workspace'
    expect(result.skipped).toEqual([
      { path: 'back\\slash.txt', reason },
      { path: 'bad\\folder', reason },
      { path: 'f\uFFFDf', reason },
      { path: 'line\nbreak.txt', reason },
    ])
    expect(await stored()).toEqual({ 'fine.txt': 'fine' })
    await run.release()
    // The next checkout removes them, including the name that is not even UTF-8.
    const next = await checkout()
    expect(await readdir(next.dir)).toEqual(['fine.txt'])
  })

  it('serializes checkouts of the same workspace and runs different workspaces in parallel', async () => {
    const one = await fixture()
    const first = await one.checkout()
    let secondResolved = false
    const second = one.checkout().then((checkout) => {
      secondResolved = true
      return checkout
    })
    await delay(200)
    expect(secondResolved).toBe(false)

    // Another workspace on the same mirrors object is not held up.
    const otherPrefix = `tenants/t1/workspaces/other-${randomUUID().slice(0, 8)}/`
    const other = await within(one.mirrors.checkout(storage(), otherPrefix), 5_000)
    open.push(other)
    expect(other.dir).not.toBe(first.dir)
    expect(secondResolved).toBe(false)

    await first.release()
    await first.release()
    const next = await within(second, 5_000)
    expect(next.dir).toBe(first.dir)
  })

  it('lets an aborted waiter leave the queue without wedging the lock', async () => {
    const { mirrors, prefix, checkout } = await fixture()
    const first = await checkout()
    const controller = new AbortController()
    const waiting = mirrors.checkout(storage(), prefix, controller.signal)
    controller.abort(new Error('run cancelled'))
    await expect(waiting).rejects.toThrow('run cancelled')
    await first.release()
    const next = await within(checkout(), 5_000)
    expect(next.downloaded).toBe(0)
  })

  it('keeps changes made in storage during the run', async () => {
    const { checkout, seed, stored, prefix } = await fixture()
    await seed({ 'edited.txt': 'base', 'removed.txt': 'base', 'deleted-remotely.txt': 'base' })
    const run = await checkout()
    await writeFile(join(run.dir, 'edited.txt'), 'local edit')
    await storage().put(`${prefix}edited.txt`, 'remote edit')
    await rm(join(run.dir, 'removed.txt'))
    await storage().put(`${prefix}removed.txt`, 'remote edit of a locally deleted file')
    await writeFile(join(run.dir, 'created.txt'), 'local')
    await storage().put(`${prefix}created.txt`, 'remote')
    await writeFile(join(run.dir, 'deleted-remotely.txt'), 'local edit')
    await storage().delete(`${prefix}deleted-remotely.txt`)
    const result = await run.commit()
    expect(result.changes).toEqual([])
    expect(result.skipped).toEqual([
      { path: 'created.txt', reason: 'created in storage during the run; storage version kept' },
      { path: 'deleted-remotely.txt', reason: 'deleted in storage during the run; not restored' },
      { path: 'edited.txt', reason: 'changed in storage during the run; storage version kept' },
      { path: 'removed.txt', reason: 'changed in storage during the run; storage version kept' },
    ])
    const expected = {
      'created.txt': 'remote',
      'edited.txt': 'remote edit',
      'removed.txt': 'remote edit of a locally deleted file',
    }
    expect(await stored()).toEqual(expected)
    await run.release()
    const next = await checkout()
    expect(await localTree(next.dir)).toEqual(expected)
  })

  it('still downloads nothing after a restart on the same root', async () => {
    const { checkout, seed, mirrorOptions, stored } = await fixture()
    await seed({ 'a.txt': 'a', 'nested/b.bin': binary })
    const first = await checkout()
    await writeFile(join(first.dir, 'committed.txt'), 'uploaded by the run')
    await first.commit()
    await first.release()
    const restarted = createWorkspaceMirrors(mirrorOptions)
    const counted = counting(storage())
    const second = await checkout(counted.storage, restarted)
    expect(second.downloaded).toBe(0)
    expect(counted.downloads()).toBe(0)
    expect(await localTree(second.dir)).toEqual(await stored())
  })

  it('re-syncs cleanly from a corrupted manifest', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'a.txt': 'a', 'b/c.txt': 'c' })
    const first = await checkout()
    await first.release()
    await writeFile(join(first.dir, 'stray.txt'), 'not in storage')
    for (const corrupt of ['{ not json', JSON.stringify({ version: 1, prefix: 'other/', files: {} })]) {
      await writeFile(join(dirname(first.dir), 'manifest.json'), corrupt)
      const next = await checkout()
      expect(next.downloaded).toBe(2)
      expect(await localTree(next.dir)).toEqual(await stored())
      await next.release()
    }
  })

  it('records only what landed when storage fails midway through a commit', async () => {
    const { checkout, seed, stored } = await fixture()
    await seed({ 'a.txt': 'a', 'b.txt': 'b' })
    let puts = 0
    const flaky: ObjectStore = {
      ...storage(),
      put: (key, body, options) => {
        puts++
        if (puts === 2) return Promise.reject(new ToolError('unavailable', 'Storage is unavailable.'))
        return storage().put(key, body, options)
      },
    }
    const run = await checkout(flaky)
    await writeFile(join(run.dir, 'a.txt'), 'a changed')
    await writeFile(join(run.dir, 'b.txt'), 'b changed')
    await expect(run.commit()).rejects.toMatchObject({ code: 'unavailable' })
    // The retry uploads only the file that did not land the first time.
    const retry = await run.commit()
    expect(retry.changes).toHaveLength(1)
    expect(await stored()).toEqual({ 'a.txt': 'a changed', 'b.txt': 'b changed' })
    await run.release()
    const next = await checkout()
    expect(next.downloaded).toBe(0)
  })

  it('refuses to commit after release', async () => {
    const { checkout } = await fixture()
    const run = await checkout()
    await run.release()
    await expect(run.commit()).rejects.toThrow('released')
  })

  it.skipIf(!isRoot)('hands the mirror to the sandbox user when owner is set', async () => {
    const owner = { uid: 65534, gid: 65534 }
    const { checkout, seed, stored, root } = await fixture({ owner })
    await seed({ 'top.txt': 'top', 'nested/deeper/file.txt': 'deep' })
    // mkdtemp makes the suite.scratch() folder 0o700; the sandbox user must be able to reach the mirror.
    await chmod(suite.scratch(), 0o711)
    const run = await checkout()
    for (const path of ['', 'top.txt', 'nested', 'nested/deeper', 'nested/deeper/file.txt']) {
      const stats = await lstat(join(run.dir, path))
      expect({ path, uid: stats.uid, gid: stats.gid }).toEqual({ path, ...owner })
    }
    expect((await lstat(root)).mode & 0o777).toBe(0o711)
    expect((await lstat(join(dirname(run.dir), 'manifest.json'))).mode & 0o777).toBe(0o600)
    // Acting as the sandbox user: create, modify and delete in every folder.
    const script = 'echo new > new.txt && echo changed > nested/deeper/file.txt && rm top.txt && echo x > nested/x.txt'
    const acted = spawnSync('sh', ['-c', script], { cwd: run.dir, uid: owner.uid, gid: owner.gid, encoding: 'utf8' })
    expect(acted.stderr).toBe('')
    expect(acted.status).toBe(0)
    const result = await run.commit()
    expect(result.changes.map((change) => `${change.change} ${change.path}`)).toEqual([
      'modified nested/deeper/file.txt',
      'added nested/x.txt',
      'added new.txt',
      'deleted top.txt',
    ])
    await run.release()
    const next = await checkout()
    expect(next.downloaded).toBe(0)
    expect(await localTree(next.dir)).toEqual(await stored())
  })
})

/** Every non-folder below dir as path → content (latin1, exact for binary); links and others marked. */
async function localTree(dir: string, base = ''): Promise<Record<string, string>> {
  const tree: Record<string, string> = {}
  const names = await readdir(join(dir, base))
  if (names.length === 0 && base !== '') tree[`${base}/`] = '<empty folder>'
  for (const name of names) {
    const path = base === '' ? name : `${base}/${name}`
    const stats = await lstat(join(dir, path))
    if (stats.isDirectory()) Object.assign(tree, await localTree(dir, path))
    else if (stats.isSymbolicLink()) tree[path] = `<link to ${await readlink(join(dir, path))}>`
    else if (stats.isFile()) tree[path] = latin1(await readFile(join(dir, path)))
    else tree[path] = '<special file>'
  }
  return tree
}

describe.each(['fs', 's3'] as const)('the workspace travels into the sandbox and back (%s storage)', (driver) => {
  let server: TestServer
  let s3rver: S3rverInstance | undefined
  let counter: ReturnType<typeof counting>

  beforeAll(async () => {
    let store: ObjectStore
    if (driver === 's3') {
      s3rver = await startS3rver()
      store = s3StorageFor(s3rver)
    } else {
      store = await createFsStorage({ root: await mkdtemp(`${tmpdir()}/toolport-sync-`) })
    }
    counter = counting(store)
    server = await startTestServer({}, { shell: true, storage: counter.storage })
  })
  afterAll(async () => {
    await server.stop()
    await s3rver?.stop()
  })

  const call = (tool: string, input: unknown) => server.call(tool, input, { workspace: 'trip' })

  it('write_file -> cat / sed -i / rm / new file -> read_file and storage see the changes', async () => {
    await call('write_file', { path: 'notes/a.txt', content: 'alpha\nbeta\n' })
    await call('write_file', { path: 'doomed.txt', content: 'bye' })
    const result = await call('execute_command', {
      command:
        'cat notes/a.txt && sed -i s/beta/gamma/ notes/a.txt && rm doomed.txt && mkdir -p out && echo made > out/new.txt',
    })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body.stdout).toBe('alpha\nbeta\n')
    expect(result.body.files_changed).toEqual([
      { path: 'doomed.txt', change: 'deleted' },
      { path: 'notes/a.txt', change: 'modified', size: 12 },
      { path: 'out/new.txt', change: 'added', size: 5 },
    ])
    expect((await call('read_file', { path: 'notes/a.txt' })).body.content).toBe('alpha\ngamma\n')
    expect((await call('read_file', { path: 'out/new.txt' })).body.content).toBe('made\n')
    expect((await call('read_file', { path: 'doomed.txt' })).status).toBe(404)
    expect(await server.storage.head('tenants/default/workspaces/trip/doomed.txt')).toBeNull()
  })

  it('does not download an unchanged workspace again, and fetches only what changed', async () => {
    await call('execute_command', { command: 'true' })
    const before = counter.downloads()
    const unchanged = await call('execute_command', { command: 'cat notes/a.txt' })
    expect(unchanged.body.stdout).toBe('alpha\ngamma\n')
    expect(counter.downloads()).toBe(before)
    await call('write_file', { path: 'notes/a.txt', content: 'changed by a tool\n' })
    const changed = await call('execute_command', { command: 'cat notes/a.txt' })
    expect(changed.body.stdout).toBe('changed by a tool\n')
    expect(counter.downloads()).toBe(before + 1)
  })

  it('deleted files disappear from the next sandbox too', async () => {
    await call('delete_file', { path: 'out/new.txt' })
    const result = await call('execute_command', { command: 'ls -R' })
    expect(result.body.stdout).not.toContain('new.txt')
  })
})

describe('the process executor (for AWS Lambda)', () => {
  let server: TestServer
  const secret = `lambda-secret-${Date.now()}`

  beforeAll(async () => {
    process.env.AWS_SECRET_ACCESS_KEY = secret
    server = await startTestServer({ TOOLPORT_SANDBOX: 'process' }, { shell: true })
  })
  afterAll(async () => {
    await server.stop()
    delete process.env.AWS_SECRET_ACCESS_KEY
  })

  it('scrubs the environment, round-trips the workspace and removes its temp folders', async () => {
    const before = (await readdir(tmpdir())).filter(
      (name) => name.startsWith('toolport-workspace-') || name.startsWith('toolport-run-'),
    )
    await server.call('write_file', { path: 'in.txt', content: 'x' })
    const result = await server.call('execute_command', { command: 'env; cat in.txt; echo y > out.txt' })
    expect(result.body.stdout).not.toContain(secret)
    expect(result.body.stdout).not.toContain('AWS_')
    expect(result.body.stdout).not.toContain('TOOLPORT_')
    expect(result.body.files_changed).toEqual([{ path: 'out.txt', change: 'added', size: 2 }])
    const after = (await readdir(tmpdir())).filter(
      (name) => name.startsWith('toolport-workspace-') || name.startsWith('toolport-run-'),
    )
    expect(after.sort()).toEqual(before.sort())
  })

  it('kills the whole process group on timeout', async () => {
    const result = await server.call('execute_command', {
      command: 'sleep 765.432 & sleep 765.432',
      timeout_seconds: 1,
    })
    expect(result.body.timed_out).toBe(true)
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('765.432'))
    expect(left).toEqual([])
  })
})
