import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { loadConfig } from '../../src/config/config'
import { commitChanges } from '../../src/sandbox/mirror/commit'
import { createMemoryStorage } from '../../src/storage/memory'
import { selectTools, toolNames } from '../../src/tools/builtins'
import { defineTool } from '../../src/tools/tool'
import { createTenantQuota, quotaStore } from '../../src/workspace/quota'
import { startTestServer, type TestServer } from '../support/server'

const alphaKey = 'alpha-key-0123456789abcdef'
const betaKey = 'beta-key-0123456789abcdef0'
const quota = 1000

describe('per-tenant storage quota (TOOLPORT_TENANT_QUOTA_BYTES)', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({
      TOOLPORT_API_KEYS: `alpha=${alphaKey},beta=${betaKey}`,
      TOOLPORT_TENANT_QUOTA_BYTES: String(quota),
      TOOLPORT_TOOLS: 'write_file,delete_file,list_files,read_file',
    })
  })
  afterAll(async () => {
    await server.stop()
  })

  it('refuses a write over the quota with 413 and a hint; other tenants are unaffected; deleting frees room', async () => {
    const write = (path: string, size: number, key: string, workspace = 'default') =>
      server.call('write_file', { path, content: 'x'.repeat(size) }, { key, workspace })

    expect((await write('first.txt', 600, alphaKey)).status).toBe(200)
    // Usage counts every workspace of the tenant.
    const refused = await write('second.txt', 600, alphaKey, 'other')
    expect(refused.status).toBe(413)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.body.code).toBe('size_exceeded')
    expect(refused.body.hint).toContain(`600 of ${quota} bytes`)
    expect(refused.body.hint).toMatch(/delete/i)
    expect(await server.storage.head('tenants/alpha/workspaces/other/second.txt')).toBeNull()

    // Replacing a file counts only the difference.
    expect((await write('first.txt', 900, alphaKey)).status).toBe(200)

    // Another tenant has a quota of its own.
    expect((await write('second.txt', 900, betaKey)).status).toBe(200)

    expect((await server.call('delete_file', { path: 'first.txt' }, { key: alphaKey })).status).toBe(200)
    expect((await write('second.txt', 600, alphaKey, 'other')).status).toBe(200)
    expect((await server.storage.head('tenants/alpha/workspaces/other/second.txt'))?.size).toBe(600)
  })

  it('counts usage from storage once, then on the shared record every instance changes', async () => {
    const storage = createMemoryStorage()
    const one = createTenantQuota({ limitBytes: 100 })
    const other = createTenantQuota({ limitBytes: 100 })
    await storage.put('tenants/t/workspaces/w/a', 'x'.repeat(40))
    await storage.put('tenants/u/workspaces/w/a', 'x'.repeat(90))
    expect(await one.usage(storage, 't')).toBe(40)
    expect(JSON.parse(new TextDecoder().decode((await storage.get('tenants/t/usage.json'))?.body))).toEqual({
      bytes: 40,
    })
    // Another instance writes through its own quota: this one sees the reservation at once.
    await quotaStore(storage, 't', other).put('tenants/t/workspaces/w/b', 'x'.repeat(50))
    expect(await one.usage(storage, 't')).toBe(90)
    const guarded = quotaStore(storage, 't', one)
    await expect(guarded.put('tenants/t/workspaces/w/c', 'x'.repeat(20))).rejects.toMatchObject({
      code: 'size_exceeded',
    })
    await guarded.delete('tenants/t/workspaces/w/b')
    expect(await other.usage(storage, 't')).toBe(40)
    await guarded.put('tenants/t/workspaces/w/c', 'x'.repeat(20))
    expect(await other.usage(storage, 't')).toBe(60)
    expect(await one.usage(storage, 'u')).toBe(90)
  })

  it('never lets concurrent writers of several instances store more than the quota', async () => {
    const storage = createMemoryStorage()
    const instances = Array.from({ length: 4 }, () => quotaStore(storage, 't', createTenantQuota({ limitBytes: 1000 })))
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, index) =>
        instances[index % 4]?.put(`tenants/t/workspaces/w/f${index}`, 'x'.repeat(100)),
      ),
    )
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(10)
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'size_exceeded' })
    }
    const listed = await storage.list('tenants/t/workspaces/')
    expect(listed.objects.reduce((sum, object) => sum + object.size, 0)).toBe(1000)
    expect(await createTenantQuota({ limitBytes: 1000 }).usage(storage, 't')).toBe(1000)
  })

  it('holds create() to the quota and counts only what it really created', async () => {
    const storage = createMemoryStorage()
    const tracker = createTenantQuota({ limitBytes: 100 })
    const guarded = quotaStore(storage, 't', tracker)
    expect(await guarded.create('tenants/t/workspaces/w/a', 'x'.repeat(60))).toBe(true)
    expect(await tracker.usage(storage, 't')).toBe(60)
    // The key exists: nothing written, nothing counted.
    expect(await guarded.create('tenants/t/workspaces/w/a', 'x'.repeat(30))).toBe(false)
    expect(await tracker.usage(storage, 't')).toBe(60)
    await expect(guarded.create('tenants/t/workspaces/w/b', 'x'.repeat(50))).rejects.toMatchObject({
      code: 'size_exceeded',
    })
    expect(await storage.head('tenants/t/workspaces/w/b')).toBeNull()
    expect(await tracker.usage(storage, 't')).toBe(60)
    // Outside the tenant's workspaces (approval claims) the quota does not apply.
    expect(await guarded.create('approvals/t/x.deciding', 'x'.repeat(200))).toBe(true)
  })

  it('skips a sandbox file over the quota with a note instead of failing the sync-back', async () => {
    const storage = createMemoryStorage()
    const tracker = createTenantQuota({ limitBytes: 100 })
    const files = await mkdtemp(join(tmpdir(), 'toolport-quota-'))
    try {
      await writeFile(join(files, 'small.txt'), 'x'.repeat(30))
      // Over the quota on its own: uploads run concurrently, so the order between files is not fixed.
      await writeFile(join(files, 'zbig.txt'), 'x'.repeat(110))
      const result = await commitChanges({
        storage: quotaStore(storage, 't', tracker),
        prefix: 'tenants/t/workspaces/w/',
        files,
        manifest: new Map(),
        maxFileBytes: 1000,
      })
      expect(result.changes.map((change) => change.path)).toEqual(['small.txt'])
      expect(result.skipped).toHaveLength(1)
      expect(result.skipped[0]?.path).toBe('zbig.txt')
      expect(result.skipped[0]?.reason).toMatch(/quota/)
      expect(await storage.head('tenants/t/workspaces/w/zbig.txt')).toBeNull()
    } finally {
      await rm(files, { recursive: true, force: true })
    }
  })

  it('reads the variables (unset: unlimited, default deadline 300 s)', () => {
    const defaults = loadConfig({}, { toolNames })
    expect(defaults.workspace.tenantQuotaBytes).toBeUndefined()
    expect(defaults.calls.callTimeoutSeconds).toBe(300)
    const set = loadConfig({ TOOLPORT_TENANT_QUOTA_BYTES: '5000', TOOLPORT_CALL_TIMEOUT_SECONDS: '12' }, { toolNames })
    expect(set.workspace.tenantQuotaBytes).toBe(5000)
    expect(set.calls.callTimeoutSeconds).toBe(12)
    expect(() => loadConfig({ TOOLPORT_TENANT_QUOTA_BYTES: '-1' }, { toolNames })).toThrow(
      /TOOLPORT_TENANT_QUOTA_BYTES/,
    )
  })
})

describe('per-call deadline (TOOLPORT_CALL_TIMEOUT_SECONDS)', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  const slowOutput = z.object({ slept: z.number() })
  // Sleeps slow_tool has completed, in order: tells whether an answer came before the tool finished.
  const finishedSleeps: number[] = []
  // Test-only tools: one ignores its signal, one declares a deadline of its own.
  const slow = defineTool({
    name: 'slow_tool',
    title: 'Slow tool',
    description: 'Sleeps, ignoring its abort signal.',
    effect: 'read',
    input: z.object({ ms: z.number().int().min(0).max(10_000) }),
    output: slowOutput,
    async run(input) {
      await sleep(input.ms)
      finishedSleeps.push(input.ms)
      return { slept: input.ms }
    },
  })
  const patient = defineTool({
    name: 'patient_tool',
    title: 'Patient tool',
    description: 'Sleeps within a timeout of its own.',
    effect: 'read',
    input: z.object({ ms: z.number().int().min(0).max(10_000) }),
    output: slowOutput,
    deadlineMs: (input) => input.ms + 2_000,
    async run(input) {
      await sleep(input.ms)
      return { slept: input.ms }
    },
  })
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer(
      { TOOLPORT_CALL_TIMEOUT_SECONDS: '1' },
      { tools: [slow, patient, ...selectTools(['list_files'])] },
    )
  })
  afterAll(async () => {
    await server.stop()
  })

  it('answers 504 timeout with a hint at the deadline, even when the tool ignores its signal', async () => {
    const started = performance.now()
    const result = await server.call('slow_tool', { ms: 4_000 })
    const elapsed = performance.now() - started
    // The answer came from the deadline, not from the tool: its 4 s sleep had not ended yet.
    expect(finishedSleeps).not.toContain(4_000)
    expect(result.status).toBe(504)
    expect(result.headers.get('content-type')).toBe('application/problem+json')
    expect(result.body.code).toBe('timeout')
    expect(result.body.hint).toContain('async=true')
    expect(elapsed).toBeGreaterThanOrEqual(900)
  })

  it('lets fast calls through, and respects a tool’s own longer timeout', async () => {
    expect((await server.call('slow_tool', { ms: 10 })).status).toBe(200)
    const result = await server.call('patient_tool', { ms: 1_500 })
    expect(result.status).toBe(200)
    expect(result.body).toEqual({ slept: 1_500 })
    expect((await server.call('list_files', {})).status).toBe(200)
  })
})
