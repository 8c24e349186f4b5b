import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FleetInstance, hasFaketime, startInstance } from '../support/fleet'
import { type S3rverInstance, startS3rver } from '../support/s3rver'

/**
 * The audit log and usage as a fleet keeps them: three real toolport processes on one s3rver bucket (the
 * shim enforces If-None-Match as S3 does), one with its clock 60 s ahead. Refusals recorded on all three
 * at once make one hash chain with no fork and no gap; usage counted on all three (one of them then
 * SIGKILLed) is read whole from any survivor.
 */
const admin = 'fleet-audit-admin-key-0123456789'
const reader = 'fleet-audit-reader-key-0123456789'
const flushMs = 200

let bucket: S3rverInstance
let keysDir: string
const instances: FleetInstance[] = []

beforeAll(async () => {
  bucket = await startS3rver()
  keysDir = await mkdtemp(join(tmpdir(), 'toolport-fleet-keys-'))
  const keysFile = join(keysDir, 'keys.json')
  await writeFile(
    keysFile,
    JSON.stringify([
      { tenant: 'acme', key: admin, admin: true },
      { tenant: 'acme', key: reader, tools: ['read_file', 'list_files'] },
    ]),
  )
  const env = { TOOLPORT_KEYS_FILE: keysFile, TOOLPORT_USAGE_FLUSH_MS: String(flushMs) }
  instances.push(
    ...(await Promise.all([
      startInstance(bucket, { name: 'a', env }),
      startInstance(bucket, { name: 'b', env }),
      startInstance(bucket, { name: 'c', env, ...(hasFaketime ? { clockOffset: '+60s' } : {}) }),
    ])),
  )
}, 120_000)

afterAll(async () => {
  for (const instance of instances) {
    instance.resume()
    await instance.kill()
  }
  await bucket?.stop()
  await rm(keysDir, { recursive: true, force: true })
})

async function call(instance: FleetInstance, key: string, tool: string, input: unknown): Promise<number> {
  const response = await fetch(`${instance.url}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(input),
  })
  await response.arrayBuffer()
  return response.status
}

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
async function get(instance: FleetInstance, path: string): Promise<any> {
  const response = await fetch(`${instance.url}${path}`, { headers: { authorization: `Bearer ${admin}` } })
  expect(response.status).toBe(200)
  return response.json()
}

describe('the audit log and usage of a fleet on one bucket', () => {
  it('keeps refusals made on three instances at once as one chain, none lost, none forked', async () => {
    const perInstance = 12
    const statuses = await Promise.all(
      instances.flatMap((instance) =>
        Array.from({ length: perInstance }, (_, index) =>
          call(instance, reader, 'write_file', { path: `${instance.name}-${index}.txt`, content: 'x' }),
        ),
      ),
    )
    expect(statuses.every((status) => status === 403)).toBe(true)
    const records: Array<{ seq: number; action: string; details: { reason: string } }> = []
    let next: string | undefined = 'after=0'
    while (next) {
      const page = await get(instances[1] as FleetInstance, `/v1/audit?limit=50&${next}`)
      records.push(...page.records)
      next = page.next
    }
    const refused = records.filter((record) => record.action === 'call.refused')
    expect(refused).toHaveLength(3 * perInstance)
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1))
    const verified = await get(instances[2] as FleetInstance, '/v1/audit/verify')
    expect(verified).toMatchObject({ ok: true, records: records.length, problems: [] })
  })

  it('sums usage over every instance, a SIGKILLed one’s included up to its last write', async () => {
    const [a, b, c] = instances as [FleetInstance, FleetInstance, FleetInstance]
    expect(await call(a, admin, 'write_file', { path: 'u.txt', content: 'usage' })).toBe(200)
    const reads = { a: 3, b: 5, c: 2 }
    for (const [instance, count] of [
      [a, reads.a],
      [b, reads.b],
      [c, reads.c],
    ] as const) {
      for (let index = 0; index < count; index++)
        expect(await call(instance, reader, 'read_file', { path: 'u.txt' })).toBe(200)
    }
    // b writes its totals within flushMs; then it dies without a goodbye.
    await new Promise((resolve) => setTimeout(resolve, flushMs * 4))
    await b.kill()
    const deadline = Date.now() + 10_000
    // biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
    let calls: any
    do {
      await new Promise((resolve) => setTimeout(resolve, flushMs))
      // The skewed instance may count into tomorrow near midnight: today and tomorrow, added up.
      const today = new Date().toISOString().slice(0, 10)
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
      const usage = await get(a, `/v1/usage?from=${today}&to=${tomorrow}`)
      calls = {}
      for (const day of usage.days) {
        for (const [tool, outcomes] of Object.entries(day.calls as Record<string, Record<string, number>>)) {
          for (const [outcome, count] of Object.entries(outcomes)) {
            calls[tool] ??= {}
            calls[tool][outcome] = (calls[tool][outcome] ?? 0) + count
          }
        }
      }
    } while (calls.read_file?.ok !== reads.a + reads.b + reads.c && Date.now() < deadline)
    expect(calls.read_file).toEqual({ ok: reads.a + reads.b + reads.c })
    expect(calls.write_file).toEqual({ ok: 1 })
    const fromC = await get(c, '/v1/usage')
    expect(fromC.bytes_stored).toBe(5)
  })
})
