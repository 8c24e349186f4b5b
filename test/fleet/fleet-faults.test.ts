import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ObjectStore } from '../../src/storage/store'
import { type CallAnswer, callTool, type FleetInstance, hasFaketime, startInstance } from '../support/fleet'
import { type S3rverInstance, s3StorageFor, startS3rver } from '../support/s3rver'

/**
 * Three real toolport processes on one s3rver bucket (the shim enforces If-Match and If-None-Match as S3
 * does), edited at once while one is SIGKILLed mid-write and restarted, one is SIGSTOPped for longer
 * than any timeout and resumed, and one runs with its clock 60 s ahead. What must hold is what a user
 * was told: every acknowledged edit is in the file, no multi_edit is half applied, a command's change
 * over a file edited meanwhile is reported and not written, and the tenant never stores more than its
 * quota plus one file.
 */
const quotaBytes = 400_000
const callTimeoutSeconds = 8
const pausedMs = (callTimeoutSeconds + 4) * 1000
const workspace = 'fleet'
const tenantRoot = 'tenants/default/workspaces/'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let bucket: S3rverInstance
let storage: ObjectStore
const slots: FleetInstance[] = []
const started: FleetInstance[] = []

const instanceEnv = {
  TOOLPORT_TENANT_QUOTA_BYTES: String(quotaBytes),
  TOOLPORT_CALL_TIMEOUT_SECONDS: String(callTimeoutSeconds),
}

async function launch(name: string, clockOffset?: string): Promise<FleetInstance> {
  const instance = await startInstance(bucket, { name, env: instanceEnv, ...(clockOffset ? { clockOffset } : {}) })
  started.push(instance)
  return instance
}

async function text(path: string): Promise<string> {
  const object = await storage.get(`${tenantRoot}${workspace}/${path}`)
  return object ? new TextDecoder().decode(object.body) : ''
}

/**
 * A 4xx answer says the call did not happen; a 5xx (a 504 at the deadline, say, for a call whose write
 * was already on its way when its instance was paused) or no answer at all leaves it open either way.
 */
const refusal = (answer: CallAnswer | null) => answer !== null && answer.status >= 400 && answer.status < 500

const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1

beforeAll(async () => {
  bucket = await startS3rver()
  storage = s3StorageFor(bucket)
  const [a, b, c] = await Promise.all([launch('a'), launch('b'), launch('c', hasFaketime ? '+60s' : undefined)])
  slots.push(a as FleetInstance, b as FleetInstance, c as FleetInstance)
}, 120_000)

afterAll(async () => {
  for (const instance of started) {
    instance.resume()
    await instance.kill()
  }
  await bucket?.stop()
})

describe('a fleet of three on one bucket', () => {
  it('runs the clock-skewed instance with its clock 60 s ahead (libfaketime)', async () => {
    expect(hasFaketime, 'install Debian package faketime').toBe(true)
    const skewed = await fetch(`${slots[2]?.url}/healthz`)
    const local = Date.now()
    const served = Date.parse(skewed.headers.get('date') ?? '')
    expect(served - local).toBeGreaterThan(50_000)
  })

  it('loses no acknowledged write under SIGKILL, SIGSTOP and a skewed clock', async () => {
    const seed = await Promise.all([
      callTool(slots[0] as FleetInstance, 'write_file', { path: 'edits.txt', content: 'START\nEND\n' }, workspace),
      callTool(slots[1] as FleetInstance, 'write_file', { path: 'multi.txt', content: 'A-END\nB-END\n' }, workspace),
    ])
    expect(seed.map((answer) => answer?.status)).toEqual([200, 200])

    let running = true
    const acked = { edits: new Set<string>(), multi: new Set<string>(), whole: new Set<string>() }
    const refused = { edits: new Set<string>(), multi: new Set<string>() }
    const attemptedWhole = new Set<string>()
    const commands: { token: string; answer: CallAnswer | null }[] = []
    const statuses = new Map<number, number>()
    const count = (answer: CallAnswer | null) => {
      const status = answer?.status ?? 0
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
    }

    async function editor(slot: number, lane: string) {
      for (let n = 0; running; n++) {
        const token = `e-${lane}-${n}`
        const answer = await callTool(
          slots[slot] as FleetInstance,
          'apply_edit',
          { path: 'edits.txt', old_text: 'END\n', new_text: `${token}\nEND\n` },
          workspace,
        )
        count(answer)
        if (answer?.status === 200) acked.edits.add(token)
        else if (refusal(answer)) refused.edits.add(token)
        else await sleep(100)
      }
    }
    async function multiEditor(slot: number, lane: string) {
      for (let n = 0; running; n++) {
        const token = `m-${lane}-${n}`
        const answer = await callTool(
          slots[slot] as FleetInstance,
          'multi_edit',
          {
            path: 'multi.txt',
            edits: [
              { old_text: 'A-END', new_text: `${token} A-END` },
              { old_text: 'B-END', new_text: `${token} B-END` },
            ],
          },
          workspace,
        )
        count(answer)
        if (answer?.status === 200) acked.multi.add(token)
        else if (refusal(answer)) refused.multi.add(token)
        else await sleep(100)
      }
    }
    async function wholeWriter(slot: number, lane: string) {
      for (let n = 0; running; n++) {
        const content = `whole ${lane} ${n}\n`.repeat(50)
        attemptedWhole.add(content)
        const answer = await callTool(
          slots[slot] as FleetInstance,
          'write_file',
          { path: 'whole.txt', content },
          workspace,
        )
        count(answer)
        if (answer?.status === 200) acked.whole.add(content)
        else if (!answer) await sleep(100)
      }
    }
    async function commander(slot: number, lane: string) {
      for (let n = 0; running; n++) {
        const token = `c-${lane}-${n}`
        // Edits land on edits.txt all the time, so the command's copy is out of date when it ends.
        const answer = await callTool(
          slots[slot] as FleetInstance,
          'execute_command',
          { command: `sleep 1.5; echo ${token} >> edits.txt` },
          workspace,
        )
        count(answer)
        commands.push({ token, answer })
        if (!answer) await sleep(100)
      }
    }

    const lanes: Promise<void>[] = []
    for (const slot of [0, 1, 2]) {
      lanes.push(editor(slot, `${slot}a`), editor(slot, `${slot}b`), multiEditor(slot, `${slot}`))
      lanes.push(wholeWriter(slot, `${slot}`), commander(slot, `${slot}`))
    }

    // SIGKILL a mid-write, then bring a new a up on the same bucket.
    await sleep(2_000)
    await (slots[0] as FleetInstance).kill()
    slots[0] = await launch('a2')
    // SIGSTOP b for longer than the call deadline (and any storage timeout), then let it go on.
    await sleep(1_000)
    const paused = slots[1] as FleetInstance
    paused.stop()
    await sleep(pausedMs)
    paused.resume()
    await sleep(3_000)
    running = false
    await Promise.all(lanes)

    const edits = await text('edits.txt')
    const multi = await text('multi.txt')
    const whole = await text('whole.txt')

    // Enough happened on every path for the checks to mean something.
    expect(acked.edits.size).toBeGreaterThan(20)
    expect(acked.multi.size).toBeGreaterThan(5)
    expect(acked.whole.size).toBeGreaterThan(5)
    expect(commands.filter(({ answer }) => answer?.status === 200).length).toBeGreaterThan(3)

    // Every acknowledged edit is in the file exactly once; a refused one (an answered error) is not.
    expect([...acked.edits].filter((token) => occurrences(edits, `${token}\n`) !== 1)).toEqual([])
    expect([...refused.edits].filter((token) => occurrences(edits, `${token}\n`) !== 0)).toEqual([])
    expect(edits.startsWith('START\n')).toBe(true)
    expect(occurrences(edits, '\nEND\n')).toBe(1)

    // multi_edit is all or nothing: each token in both lines or in neither; acknowledged ones in both.
    const [lineA = '', lineB = ''] = multi.split('\n')
    const tokensOf = (line: string) => line.split(' ').filter((word) => word.startsWith('m-'))
    expect(tokensOf(lineA).sort()).toEqual(tokensOf(lineB).sort())
    expect([...acked.multi].filter((token) => !tokensOf(lineA).includes(token))).toEqual([])
    expect([...refused.multi].filter((token) => tokensOf(lineA).includes(token))).toEqual([])

    // A whole-file write replaces the file whole: the final content is one that was written.
    expect(attemptedWhole.has(whole)).toBe(true)

    // A command's change of edits.txt is either saved (then it is in the file) or reported as a
    // conflict (then it is not): never written over an edit that landed during the run.
    let conflicts = 0
    for (const { token, answer } of commands) {
      if (answer?.status !== 200) continue
      const body = answer.body as {
        files_changed: { path: string }[]
        skipped_files?: { path: string; reason: string }[]
      }
      const saved = body.files_changed.some((change) => change.path === 'edits.txt')
      const skipped = body.skipped_files?.find((file) => file.path === 'edits.txt')
      expect(saved !== Boolean(skipped), JSON.stringify(body)).toBe(true)
      if (saved) expect(occurrences(edits, `${token}\n`)).toBe(1)
      else {
        expect(skipped?.reason).toMatch(/changed in storage/)
        expect(occurrences(edits, `${token}\n`)).toBe(0)
        conflicts++
      }
    }
    expect(conflicts).toBeGreaterThan(0)
    // Lost races are retried or refused with 409; the only 5xx are deadlines (504) of calls on the
    // paused instance. Never a 500.
    expect([...statuses.keys()].filter((status) => status >= 500 && status !== 504)).toEqual([])
  }, 120_000)

  it('never stores more than the quota plus one file, whichever instance writes', async () => {
    const fileBytes = 20_000
    const before = await storedBytes()
    const answers = await Promise.all(
      Array.from({ length: 36 }, (_, index) =>
        callTool(
          slots[index % 3] as FleetInstance,
          'write_file',
          { path: `q/file-${index}.txt`, content: 'q'.repeat(fileBytes) },
          'quota',
        ),
      ),
    )
    const statuses = answers.map((answer) => answer?.status)
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0)
    expect(statuses.filter((status) => status === 413).length).toBeGreaterThan(0)
    expect(statuses.filter((status) => status !== 200 && status !== 413)).toEqual([])
    expect(await storedBytes()).toBeLessThanOrEqual(quotaBytes + fileBytes)
    // Each accepted write is stored whole, and room for them all was there: the first refusal came
    // only once the quota was nearly reached.
    const accepted = statuses.filter((status) => status === 200).length
    expect(await storedBytes(`${tenantRoot}quota/`)).toBe(accepted * fileBytes)
    expect(before + accepted * fileBytes).toBeGreaterThan(quotaBytes - 2 * fileBytes)
  }, 60_000)
})

async function storedBytes(prefix = tenantRoot): Promise<number> {
  let bytes = 0
  let cursor: string | undefined
  do {
    const page = await storage.list(prefix, cursor ? { cursor } : {})
    for (const object of page.objects) bytes += object.size
    cursor = page.cursor
  } while (cursor)
  return bytes
}
