import { readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFsStorage } from '../src/storage/fs'
import type { ObjectStore } from '../src/storage/store'
import { type S3rverInstance, s3StorageFor, startS3rver } from './support/s3rver'
import { startTestServer, type TestServer } from './support/server'

/** Counts downloads, so a test can prove an unchanged workspace is not fetched again. */
function countingDownloads(store: ObjectStore): { store: ObjectStore; downloads: () => number } {
  let downloads = 0
  return {
    store: {
      ...store,
      driver: store.driver,
      get: (key) => {
        downloads++
        return store.get(key)
      },
      getStream: (key) => {
        downloads++
        return store.getStream(key)
      },
    },
    downloads: () => downloads,
  }
}

describe.each(['fs', 's3'] as const)('the workspace travels into the sandbox and back (%s storage)', (driver) => {
  let server: TestServer
  let s3rver: S3rverInstance | undefined
  let counter: ReturnType<typeof countingDownloads>

  beforeAll(async () => {
    let store: ObjectStore
    if (driver === 's3') {
      s3rver = await startS3rver()
      store = s3StorageFor(s3rver)
    } else {
      const { mkdtemp } = await import('node:fs/promises')
      store = await createFsStorage({ root: await mkdtemp(`${tmpdir()}/toolport-sync-`) })
    }
    counter = countingDownloads(store)
    server = await startTestServer({}, { shell: true, storage: counter.store })
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
    const { execFileSync } = await import('node:child_process')
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('765.432'))
    expect(left).toEqual([])
  })
})
