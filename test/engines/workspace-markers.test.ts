import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolError } from '../../src/core/errors'
import { type Checkout, createWorkspaceMirrors, type WorkspaceMirrors } from '../../src/sandbox/mirror/mirror'
import { changeMarkerKey, changeMarkerPrefix, markWorkspaceChanged } from '../../src/storage/change-markers'
import { createFsStorage } from '../../src/storage/fs'
import type { ObjectStore } from '../../src/storage/store'
import { createWorkspace } from '../../src/workspace/workspace'
import { mirrorDrivers, useMirrorSuite } from '../support/mirror-suite'
import { startTestServer, type TestServer } from '../support/server'

// Change markers (storage/change-markers.ts, sandbox/mirror/freshness.ts): a checkout of an unchanged
// workspace lists nothing and walks nothing, yet every write by toolport, by another instance or (after the
// reconciliation period) by anyone is seen by the next run, and every change a run makes reaches storage.

const reconcileMs = 60_000

/** Counts, at the storage level, the listings and downloads of one workspace's objects. */
function counting(storage: ObjectStore, prefix: string) {
  const counts = { listings: 0, downloads: 0 }
  const counted: ObjectStore = {
    ...storage,
    list: (listPrefix, options) => {
      if (listPrefix.startsWith(prefix)) counts.listings++
      return storage.list(listPrefix, options)
    },
    getStream: (key) => {
      if (key.startsWith(prefix)) counts.downloads++
      return storage.getStream(key)
    },
  }
  return { storage: counted, counts }
}

describe.each(mirrorDrivers)('change markers on $name storage', ({ setup }) => {
  const suite = useMirrorSuite(setup, 'toolport-markers-test')
  const { open, storage } = suite

  /** A fresh workspace; instance() is one service instance (its own mirrors root, reader id and clock). */
  async function fixture() {
    const workspaceId = `ws-${randomUUID().slice(0, 8)}`
    const prefix = `tenants/t1/workspaces/${workspaceId}/`
    const instance = () => {
      const root = join(suite.scratch(), `mirrors-${randomUUID().slice(0, 8)}`)
      const clock = { now: 1_000_000 }
      const options = { root, maxFileBytes: 1024 * 1024, changeMarkers: { reconcileMs, now: () => clock.now } }
      let mirrors: WorkspaceMirrors = createWorkspaceMirrors(options)
      return {
        root,
        clock,
        /** The same root after a restart: nothing in memory survives. */
        restart() {
          mirrors = createWorkspaceMirrors(options)
        },
        async checkout() {
          const counted = counting(storage(), prefix)
          const result = await mirrors.checkout(counted.storage, prefix)
          open.push(result)
          return Object.assign(result, { counts: counted.counts })
        },
        async marker() {
          return changeMarkerKey(prefix, (await readFile(join(root, 'reader-id'), 'utf8')).trim())
        },
      }
    }
    const seed = async (count: number) => {
      const pending: Promise<unknown>[] = []
      for (let index = 0; index < count; index++) {
        pending.push(storage().put(`${prefix}dir${index % 20}/file-${index}.txt`, `content of file ${index}\n`))
        if (pending.length === 32) await Promise.all(pending.splice(0))
      }
      await Promise.all(pending)
    }
    const stored = async (): Promise<Record<string, string>> => {
      const tree: Record<string, string> = {}
      let cursor: string | undefined
      do {
        const page = await storage().list(prefix, cursor === undefined ? {} : { cursor })
        for (const object of page.objects) {
          const found = await storage().get(object.key)
          if (found) tree[object.key.slice(prefix.length)] = Buffer.from(found.body).toString('latin1')
        }
        cursor = page.cursor
      } while (cursor)
      return tree
    }
    const seeded = (count: number) =>
      Object.fromEntries(
        Array.from({ length: count }, (_, index) => [
          `dir${index % 20}/file-${index}.txt`,
          `content of file ${index}\n`,
        ]),
      )
    const markers = async () => (await storage().list(changeMarkerPrefix(prefix))).objects.map((object) => object.key)
    const workspace = () => createWorkspace(storage(), 't1', workspaceId)
    return { prefix, instance, seed, seeded, stored, markers, workspace }
  }

  /** Checks out, commits nothing, releases: the state after a call that changed nothing. */
  async function settle(target: { checkout(): Promise<Checkout> }): Promise<void> {
    const run = await target.checkout()
    await run.commit()
    await run.release()
  }

  it('checks an unchanged workspace out with neither a listing nor a download', async () => {
    const { instance, seed, stored } = await fixture()
    await seed(30)
    const one = instance()
    const first = await one.checkout()
    expect(first.counts.listings).toBeGreaterThan(0)
    expect(first.downloaded).toBe(30)
    await first.commit()
    await first.release()
    for (let call = 0; call < 3; call++) {
      const next = await one.checkout()
      expect(next.counts).toEqual({ listings: 0, downloads: 0 })
      expect(next.downloaded).toBe(0)
      expect(await localTree(next.dir)).toEqual(await stored())
      expect(await next.commit()).toEqual({ changes: [], skipped: [] })
      await next.release()
    }
  })

  it("sees write_file's and delete_file's changes at the next checkout", async () => {
    const { instance, seed, stored, workspace, markers } = await fixture()
    await seed(10)
    const one = instance()
    await settle(one)
    expect(await markers()).toEqual([await one.marker()])
    await workspace().writeFile('dir3/file-3.txt', new TextEncoder().encode('rewritten by write_file'), 1024)
    await workspace().writeFile('new/by-write-file.txt', new TextEncoder().encode('new'), 1024)
    // The writers delete every reader's marker before they answer.
    expect(await markers()).toEqual([])
    const afterWrites = await one.checkout()
    expect(afterWrites.counts.listings).toBeGreaterThan(0)
    expect(afterWrites.downloaded).toBe(2)
    expect(await localTree(afterWrites.dir)).toEqual(await stored())
    await afterWrites.commit()
    await afterWrites.release()
    await workspace().deleteFile('dir4/file-4.txt')
    const afterDelete = await one.checkout()
    expect(afterDelete.counts.listings).toBeGreaterThan(0)
    expect(await localTree(afterDelete.dir)).toEqual(await stored())
    expect(Object.keys(await localTree(afterDelete.dir))).not.toContain('dir4/file-4.txt')
  })

  it('brings a run’s change to one of 1,000 files, a delete, renames and an mtime-preserving edit to storage and to another instance', async () => {
    const { instance, seed, seeded, stored, markers } = await fixture()
    await seed(1000)
    const one = instance()
    const other = instance()
    await settle(one)
    await settle(other)
    expect((await markers()).sort()).toEqual([await one.marker(), await other.marker()].sort())
    const expected = seeded(1000)

    const run = await one.checkout()
    expect(run.counts).toEqual({ listings: 0, downloads: 0 })
    await writeFile(join(run.dir, 'dir7/file-507.txt'), 'changed by the run\n')
    expected['dir7/file-507.txt'] = 'changed by the run\n'
    await rm(join(run.dir, 'dir8/file-8.txt'))
    delete expected['dir8/file-8.txt']
    await rename(join(run.dir, 'dir9/file-9.txt'), join(run.dir, 'dir9/renamed.txt'))
    expected['dir9/renamed.txt'] = expected['dir9/file-9.txt'] as string
    delete expected['dir9/file-9.txt']
    await rename(join(run.dir, 'dir10'), join(run.dir, 'moved'))
    for (const path of Object.keys(expected).filter((key) => key.startsWith('dir10/'))) {
      expected[`moved/${path.slice('dir10/'.length)}`] = expected[path] as string
      delete expected[path]
    }
    // Same size, mtime put back to the nanosecond: only ctime tells the edit apart.
    const edited = join(run.dir, 'dir11/file-11.txt')
    const times = join(suite.scratch(), `times-${randomUUID()}`)
    await writeFile(times, '')
    execFileSync('touch', ['-r', edited, times])
    await writeFile(edited, 'CONTENT OF FILE 11\n')
    execFileSync('touch', ['-r', times, edited])
    expected['dir11/file-11.txt'] = 'CONTENT OF FILE 11\n'
    const result = await run.commit()
    await run.release()
    expect(result.skipped).toEqual([])
    // 1 edit + 1 delete + 2 for the rename + 100 for the folder moved + 1 mtime-preserving edit.
    expect(result.changes).toHaveLength(105)
    expect(await stored()).toEqual(expected)
    // The committing instance keeps its marker (it knows what it wrote); the other's is gone.
    expect(await markers()).toEqual([await one.marker()])

    const again = await one.checkout()
    expect(again.counts).toEqual({ listings: 0, downloads: 0 })
    expect(await localTree(again.dir)).toEqual(expected)
    await again.release()
    const elsewhere = await other.checkout()
    expect(elsewhere.counts.listings).toBeGreaterThan(0)
    expect(elsewhere.downloaded).toBe(53)
    expect(await localTree(elsewhere.dir)).toEqual(expected)
  }, 180_000)

  it('lists again when its marker is missing, or is not the one it wrote (a marker that lies)', async () => {
    const { instance, seed, stored, prefix } = await fixture()
    await seed(5)
    const one = instance()
    await settle(one)
    // Deleted by someone who then changed a file without any writer of toolport.
    await storage().delete(await one.marker())
    await storage().put(`${prefix}dir1/file-1.txt`, 'changed, marker deleted')
    const missing = await one.checkout()
    expect(missing.counts.listings).toBeGreaterThan(0)
    expect(await readFile(join(missing.dir, 'dir1/file-1.txt'), 'utf8')).toBe('changed, marker deleted')
    await missing.commit()
    await missing.release()
    // Present, but rewritten by someone else: its etag is not the one this instance wrote.
    await storage().put(await one.marker(), 'forged marker')
    await storage().put(`${prefix}dir2/file-2.txt`, 'changed behind a forged marker')
    const forged = await one.checkout()
    expect(forged.counts.listings).toBeGreaterThan(0)
    expect(await localTree(forged.dir)).toEqual(await stored())
    expect(await readFile(join(forged.dir, 'dir2/file-2.txt'), 'utf8')).toBe('changed behind a forged marker')
  })

  it('sees a writer that bypasses the markers at the first checkout after the reconciliation period', async () => {
    const { instance, seed, stored, prefix } = await fixture()
    await seed(5)
    const one = instance()
    await settle(one)
    await storage().put(`${prefix}dir3/file-3.txt`, 'written by another program')
    await storage().put(`${prefix}added-behind.txt`, 'also')
    // The documented limit: within the period, only writers that delete markers are seen.
    one.clock.now += reconcileMs - 1
    const within = await one.checkout()
    expect(within.counts.listings).toBe(0)
    await within.commit()
    await within.release()
    one.clock.now += 1
    const after = await one.checkout()
    expect(after.counts.listings).toBeGreaterThan(0)
    expect(after.downloaded).toBe(2)
    expect(await localTree(after.dir)).toEqual(await stored())
    await after.commit()
    await after.release()
    // The period starts again with that listing.
    const next = await one.checkout()
    expect(next.counts.listings).toBe(0)
  })

  it('walks and heals the copy after a run that left what storage cannot hold', async () => {
    const { instance, seed, stored } = await fixture()
    await seed(5)
    const one = instance()
    await settle(one)
    const run = await one.checkout()
    await symlink('/etc/passwd', join(run.dir, 'link'))
    await mkdir(join(run.dir, 'empty-folder'))
    await mkdir(join(run.dir, 'dir0/empty-inside'))
    await chmod(join(run.dir, 'dir1'), 0o700)
    execFileSync('mkfifo', [join(run.dir, 'pipe')])
    const result = await run.commit()
    expect(result.changes).toEqual([])
    expect(result.skipped.map((entry) => entry.path)).toEqual(['link', 'pipe'])
    await run.release()
    const next = await one.checkout()
    expect(next.counts.listings).toBeGreaterThan(0)
    expect(await localTree(next.dir)).toEqual(await stored())
    await next.commit()
    await next.release()
    // Healed: trusted again.
    expect((await one.checkout()).counts.listings).toBe(0)
  })

  it('walks and heals the copy after a run whose changes were never committed', async () => {
    const { instance, seed, stored } = await fixture()
    await seed(5)
    const one = instance()
    await settle(one)
    const run = await one.checkout()
    await writeFile(join(run.dir, 'dir2/file-2.txt'), 'changed, then the service gave up on the call')
    await writeFile(join(run.dir, 'stray.txt'), 'never synced')
    await run.release()
    const next = await one.checkout()
    expect(next.counts.listings).toBeGreaterThan(0)
    expect(next.downloaded).toBe(1)
    expect(await localTree(next.dir)).toEqual(await stored())
  })

  it('makes every reader list again after a commit that failed midway', async () => {
    const { instance, seed, stored, prefix, markers } = await fixture()
    await seed(5)
    const one = instance()
    const other = instance()
    await settle(one)
    await settle(other)
    let puts = 0
    const flakyMirrors = createWorkspaceMirrors({
      root: one.root,
      maxFileBytes: 1024 * 1024,
      changeMarkers: { reconcileMs },
    })
    const flaky: ObjectStore = {
      ...storage(),
      put: (key, body, options) => {
        if (key.startsWith(prefix) && ++puts === 2) {
          return Promise.reject(new ToolError('unavailable', 'Storage is unavailable.'))
        }
        return storage().put(key, body, options)
      },
    }
    const run = await flakyMirrors.checkout(flaky, prefix)
    open.push(run)
    await writeFile(join(run.dir, 'dir0/file-0.txt'), 'a changed')
    await writeFile(join(run.dir, 'dir1/file-1.txt'), 'b changed')
    await expect(run.commit()).rejects.toMatchObject({ code: 'unavailable' })
    await run.release()
    // One of the two landed: no reader may trust its copy, the committing one included.
    expect(await markers()).toEqual([await one.marker()])
    const elsewhere = await other.checkout()
    expect(elsewhere.counts.listings).toBeGreaterThan(0)
    expect(await localTree(elsewhere.dir)).toEqual(await stored())
    await elsewhere.release()
    const retry = await flakyMirrors.checkout(storage(), prefix)
    open.push(retry)
    expect(await localTree(retry.dir)).toEqual(await stored())
  })

  it('counts the whole copy in the commit walk and writes nothing past a limit', async () => {
    const { instance, seed, stored } = await fixture()
    await seed(5)
    const one = instance()
    await settle(one)
    const before = await stored()
    const run = await one.checkout()
    await writeFile(join(run.dir, 'dir0/file-0.txt'), 'would be synced within the limits')
    // Hidden below a folder the sync never enters (its name is not allowed): counted all the same.
    await mkdir(join(run.dir, 'bad\\folder/deeper'), { recursive: true })
    for (let index = 0; index < 20; index++) await writeFile(join(run.dir, `bad\\folder/deeper/${index}`), 'x')
    // 5 files in 5 folders, then 2 folders and 20 files hidden: 32 entries.
    expect(await run.commit({ bytes: 1024 * 1024, entries: 25 })).toEqual({
      changes: [],
      skipped: [],
      passed: 'workspace file count',
    })
    expect(await run.commit({ bytes: 100, entries: 1000 })).toMatchObject({ passed: 'workspace size' })
    expect(await stored()).toEqual(before)
    await run.discard()
    await run.release()
    const next = await one.checkout()
    expect(next.counts.listings).toBe(0)
    expect(await localTree(next.dir)).toEqual(before)
  })

  it('keeps one marker per instance across restarts, and none without change markers', async () => {
    const { instance, seed, markers, prefix } = await fixture()
    await seed(3)
    const one = instance()
    await settle(one)
    one.restart()
    const restarted = await one.checkout()
    // Nothing survives in memory: a full listing first, under the same marker.
    expect(restarted.counts.listings).toBeGreaterThan(0)
    await restarted.release()
    expect(await markers()).toEqual([await one.marker()])
    const plain = createWorkspaceMirrors({ root: join(suite.scratch(), `plain-${randomUUID()}`), maxFileBytes: 1024 })
    const run = await plain.checkout(storage(), prefix)
    await writeFile(join(run.dir, 'dir0/file-0.txt'), 'changed without markers')
    await run.commit()
    await run.release()
    // A writer without markers of its own still tells the readers that have them.
    expect(await markers()).toEqual([])
  })
})

describe('execute_command and a program that writes the bucket without toolport', () => {
  let storageRoot = ''
  const servers: TestServer[] = []

  beforeAll(async () => {
    storageRoot = await mkdtemp(join(tmpdir(), 'toolport-markers-outside-'))
    const storage = await createFsStorage({ root: storageRoot })
    servers.push(await startTestServer({}, { shell: true, storage }))
    servers.push(await startTestServer({ TOOLPORT_SHELL_RECONCILE_SECONDS: '0' }, { shell: true, storage }))
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await rm(storageRoot, { recursive: true, force: true })
  })

  it('is seen once it deletes the markers, and at once with TOOLPORT_SHELL_RECONCILE_SECONDS=0', async () => {
    const [trusting, listing] = servers as [TestServer, TestServer]
    const prefix = 'tenants/default/workspaces/outside/'
    const cat = async (server: TestServer) =>
      (await server.call('execute_command', { command: 'cat a.txt' }, { workspace: 'outside' })).body.stdout
    await trusting.storage.put(`${prefix}a.txt`, 'one')
    expect(await cat(trusting)).toBe('one')
    expect(await cat(listing)).toBe('one')
    // Behind toolport's back: the instance that lists on every call sees it; the other, within its
    // period (60 s), only once the writer deletes the workspace's markers, as docs/sandbox.md tells it to.
    await trusting.storage.put(`${prefix}a.txt`, 'two')
    expect(await cat(listing)).toBe('two')
    expect(await cat(trusting)).toBe('one')
    await markWorkspaceChanged(trusting.storage, prefix)
    expect(await cat(trusting)).toBe('two')
  })
})

describe('execute_command over change markers, two service instances on one storage', () => {
  let storageRoot = ''
  let servers: TestServer[] = []

  beforeAll(async () => {
    storageRoot = await mkdtemp(join(tmpdir(), 'toolport-markers-http-'))
    const storage = await createFsStorage({ root: storageRoot })
    servers = [await startTestServer({}, { shell: true, storage }), await startTestServer({}, { shell: true, storage })]
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await rm(storageRoot, { recursive: true, force: true })
  })

  it('each instance sees what the other wrote, by write_file and by a command', async () => {
    const [first, second] = servers as [TestServer, TestServer]
    const call = (server: TestServer, tool: string, input: unknown) => server.call(tool, input, { workspace: 'shared' })
    await call(first, 'write_file', { path: 'a.txt', content: 'one' })
    expect((await call(first, 'execute_command', { command: 'cat a.txt' })).body.stdout).toBe('one')
    expect((await call(second, 'execute_command', { command: 'cat a.txt' })).body.stdout).toBe('one')
    await call(second, 'write_file', { path: 'a.txt', content: 'two' })
    expect((await call(first, 'execute_command', { command: 'cat a.txt' })).body.stdout).toBe('two')
    const changed = await call(first, 'execute_command', { command: 'echo three > a.txt && echo new > b.txt' })
    expect(changed.body.files_changed_count).toBe(2)
    expect((await call(second, 'execute_command', { command: 'cat a.txt b.txt' })).body.stdout).toBe('three\nnew\n')
    await call(second, 'execute_command', { command: 'rm b.txt' })
    expect((await call(first, 'execute_command', { command: 'ls' })).body.stdout).toBe('a.txt\n')
  })
})

/** Every non-folder below dir as path → content (latin1); links and others marked, empty folders shown. */
async function localTree(dir: string, base = ''): Promise<Record<string, string>> {
  const tree: Record<string, string> = {}
  const names = await readdir(join(dir, base), { withFileTypes: true })
  if (names.length === 0 && base !== '') tree[`${base}/`] = '<empty folder>'
  for (const entry of names) {
    const path = base === '' ? entry.name : `${base}/${entry.name}`
    if (entry.isDirectory()) Object.assign(tree, await localTree(dir, path))
    else if (entry.isSymbolicLink()) tree[path] = '<link>'
    else if (entry.isFile()) tree[path] = (await readFile(join(dir, path))).toString('latin1')
    else tree[path] = '<special file>'
  }
  return tree
}
