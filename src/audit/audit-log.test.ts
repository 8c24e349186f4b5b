import { describe, expect, it } from 'vitest'
import { silentLogger } from '../core/logger'
import { auditKeys } from '../storage/layout'
import { createMemoryStorage } from '../storage/memory'
import { createAuditLog } from './audit-log'

const event = (index: number) => ({
  tenant: 'acme',
  principal: `key-${index % 3}`,
  action: 'call.refused' as const,
  target: `tool-${index}`,
  outcome: 'refused' as const,
})

describe('the audit chain', () => {
  it('stays one chain when several logs (instances) on one store append at once', async () => {
    const storage = createMemoryStorage()
    const logs = Array.from({ length: 4 }, () => createAuditLog({ storage, log: silentLogger, retentionDays: 0 }))
    await Promise.all(Array.from({ length: 40 }, (_, index) => logs[index % 4]?.record(event(index))))
    const verified = await logs[0]?.verify('acme')
    expect(verified).toMatchObject({ ok: true, records: 40, first_seq: 1, last_seq: 40, problems: [] })
    const page = await logs[1]?.page('acme', { after: 0, limit: 100, filter: {} })
    expect(new Set(page?.records.map((record) => record.target)).size).toBe(40)
    // Each record links to the one before it.
    for (const [index, record] of (page?.records ?? []).entries()) {
      if (index > 0) expect(record.prev).toBe(page?.records[index - 1]?.hash)
    }
  })

  it('filters and pages both ways', async () => {
    const log = createAuditLog({ storage: createMemoryStorage(), log: silentLogger, retentionDays: 0 })
    for (let index = 0; index < 9; index++) await log.record(event(index))
    const byKey = await log.page('acme', { limit: 10, filter: { principal: 'key-1' } })
    expect(byKey.records.map((record) => record.seq)).toEqual([8, 5, 2])
    const first = await log.page('acme', { after: 0, limit: 4, filter: {} })
    expect(first.records.map((record) => record.seq)).toEqual([1, 2, 3, 4])
    expect(first.next).toEqual({ after: 4 })
    const last = await log.page('acme', { after: 8, limit: 4, filter: {} })
    expect(last.records.map((record) => record.seq)).toEqual([9])
    expect(last.next).toBeUndefined()
    const newest = await log.page('acme', { before: 4, limit: 10, filter: {} })
    expect(newest.records.map((record) => record.seq)).toEqual([3, 2, 1])
  })

  it('tells retention from removal: pruned records are said so in the chain', async () => {
    const storage = createMemoryStorage()
    let now = new Date('2026-01-01T00:00:00Z')
    const log = createAuditLog({ storage, log: silentLogger, retentionDays: 0, now: () => now })
    for (let index = 0; index < 5; index++) await log.record(event(index))
    now = new Date('2026-03-01T00:00:00Z')
    for (let index = 5; index < 8; index++) await log.record(event(index))
    expect(await log.prune('acme', new Date('2026-02-01T00:00:00Z'))).toBe(5)
    const verified = await log.verify('acme')
    expect(verified).toMatchObject({ ok: true, first_seq: 6, last_seq: 9, pruned_through: 5 })
    // Removing the first record left is a gap retention does not explain.
    await storage.delete(auditKeys.record('acme', 6))
    const broken = await log.verify('acme')
    expect(broken.problems).toEqual([expect.objectContaining({ seq: 6, through: 6, problem: 'missing' })])
  })

  it('reports the end of the chain cut off, and a record slipped in with a forged link', async () => {
    const storage = createMemoryStorage()
    const log = createAuditLog({ storage, log: silentLogger, retentionDays: 0 })
    for (let index = 0; index < 4; index++) await log.record(event(index))
    await storage.delete(auditKeys.record('acme', 4))
    expect((await log.verify('acme')).problems).toEqual([
      expect.objectContaining({ seq: 4, through: 4, problem: 'missing' }),
    ])
    // A whole new record (hashing right) put in place of the third, linking to nothing real.
    const third = JSON.parse(new TextDecoder().decode((await storage.get(auditKeys.record('acme', 3)))?.body))
    const { sha256Hex } = await import('../core/digest')
    const { canonicalJson } = await import('./canonical-json')
    const { hash: _, ...body } = { ...third, prev: 'f'.repeat(64), principal: 'key-9' }
    await storage.put(
      auditKeys.record('acme', 3),
      JSON.stringify({ ...body, hash: await sha256Hex(canonicalJson(body)) }),
    )
    const problems = (await log.verify('acme')).problems.map((problem) => `${problem.seq}:${problem.problem}`)
    expect(problems).toEqual(['3:unlinked', '4:missing'])
  })
})
