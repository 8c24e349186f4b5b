import { execFileSync } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJobStore } from '../../src/jobs/job-store'
import { createFsStorage } from '../../src/storage/fs'
import type { ObjectStore } from '../../src/storage/store'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { type S3rverInstance, s3StorageFor, startS3rver } from '../support/s3rver'
import { startTestServer, type TestServer } from '../support/server'

const keyA = 'tenant-a-key-0123456789'
const keyB = 'tenant-b-key-0123456789'
// Of tenant a, limited to two tools.
const scopedKey = 'tenant-a-scoped-key-0123456789'
const secret = 'webhook-signing-secret-0123456789abcdef'

async function poll(statusUrl: string, key?: string, until = ['succeeded', 'failed', 'cancelled']) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const job = await fetch(statusUrl, { headers: key ? { authorization: `Bearer ${key}` } : {} }).then((response) =>
      response.json(),
    )
    if (until.includes(job.status)) return job
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`job at ${statusUrl} never reached ${until.join('/')}`)
}

async function submit(server: TestServer, tool: string, body: unknown, options: { key?: string; query?: string } = {}) {
  return fetch(`${server.url}/v1/tools/${tool}?async=true${options.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(options.key ? { authorization: `Bearer ${options.key}` } : {}) },
    body: JSON.stringify(body),
  })
}

describe('asynchronous jobs', () => {
  let server: TestServer
  let receiver: LocalWeb
  let receiverCalls = 0

  beforeAll(async () => {
    receiver = await startLocalWeb({
      '/hook': (_request, response) => {
        receiverCalls++
        response.statusCode = receiverCalls === 1 ? 500 : 200
        response.end()
      },
    })
    server = await startTestServer(
      {
        TOOLPORT_API_KEYS: `a=${keyA},b=${keyB}`,
        TOOLPORT_SIGNING_SECRET: secret,
        TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
        TOOLPORT_CALLBACK_BACKOFF_MS: '100',
        TOOLPORT_SYNC_TIMEOUT_SECONDS: '1',
      },
      { shell: true, fileKeys: [{ tenant: 'a', key: scopedKey, tools: ['list_files', 'read_file'] }] },
    )
  })
  afterAll(async () => {
    await server.stop()
    await receiver.stop()
  })

  it('answers 202 with a job and Location, then the result is collected', async () => {
    const response = await submit(server, 'execute_command', { command: 'sleep 0.5; echo done' }, { key: keyA })
    expect(response.status).toBe(202)
    const job = await response.json()
    expect(job).toMatchObject({ status: 'queued', tool: 'execute_command' })
    expect(response.headers.get('location')).toBe(job.status_url)
    const finished = await poll(job.status_url, keyA)
    expect(finished).toMatchObject({ status: 'succeeded', result: { exit_code: 0, stdout: 'done\n' } })
    expect(finished.started_at).not.toBeNull()
  })

  it('runs pdf_generation as a job and hands over the file', async () => {
    const response = await submit(
      server,
      'pdf_generation',
      { content: 'A report made later.', content_type: 'text' },
      { key: keyA },
    )
    expect(response.status).toBe(202)
    const finished = await poll((await response.json()).status_url, keyA)
    expect(finished.status, JSON.stringify(finished.error)).toBe('succeeded')
    const [file] = finished.result.files
    expect(file.mime_type).toBe('application/pdf')
    const pdf = new Uint8Array(await (await fetch(file.url)).arrayBuffer())
    expect(new TextDecoder().decode(pdf.subarray(0, 5))).toBe('%PDF-')
    expect(pdf.byteLength).toBe(file.size)
  })

  it('also accepts Prefer: respond-async, and still validates the input at once', async () => {
    const response = await fetch(`${server.url}/v1/tools/write_file`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keyA}`, prefer: 'respond-async' },
      body: JSON.stringify({ path: 'async.txt', content: 'written later' }),
    })
    expect(response.status).toBe(202)
    expect((await poll((await response.json()).status_url, keyA)).status).toBe('succeeded')
    expect((await submit(server, 'write_file', { path: '../x', content: '' }, { key: keyA })).status).toBe(400)
  })

  it('stores a failure as the problem document', async () => {
    const job = await (await submit(server, 'read_file', { path: 'missing.txt' }, { key: keyA })).json()
    const failed = await poll(job.status_url, keyA)
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'not_found', status: 404 } })
    expect(failed.error.hint).toBeTruthy()
  })

  it('cancels a running command and kills its processes', async () => {
    const marker = '543.21'
    const job = await (
      await submit(server, 'execute_command', { command: `sleep ${marker}`, timeout_seconds: 600 }, { key: keyA })
    ).json()
    await poll(job.status_url, keyA, ['running'])
    await new Promise((resolve) => setTimeout(resolve, 500))
    const cancelled = await fetch(job.status_url, { method: 'DELETE', headers: { authorization: `Bearer ${keyA}` } })
    expect((await cancelled.json()).status).toBe('cancelled')
    await new Promise((resolve) => setTimeout(resolve, 500))
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(`sleep ${marker}`))
    expect(left).toEqual([])
    expect((await poll(job.status_url, keyA)).status).toBe('cancelled')
  })

  it('shows a job only to the tenant that made it', async () => {
    const job = await (await submit(server, 'list_files', {}, { key: keyA })).json()
    const asB = await fetch(job.status_url, { headers: { authorization: `Bearer ${keyB}` } })
    expect(asB.status).toBe(404)
    expect((await asB.json()).code).toBe('not_found')
    expect(
      (await fetch(job.status_url, { method: 'DELETE', headers: { authorization: `Bearer ${keyB}` } })).status,
    ).toBe(404)
    expect((await fetch(job.status_url)).status).toBe(401)
    expect(
      (await fetch(`${server.url}/v1/jobs/not-a-job`, { headers: { authorization: `Bearer ${keyA}` } })).status,
    ).toBe(404)
  })

  it("shows a key limited to some tools only its own jobs, never another key's result", async () => {
    await server.call('write_file', { path: 'private.txt', content: 'for the full key only' }, { key: keyA })
    const other = await (await submit(server, 'read_file', { path: 'private.txt' }, { key: keyA })).json()
    expect((await poll(other.status_url, keyA)).result.content).toBe('for the full key only')
    const asScoped = { authorization: `Bearer ${scopedKey}` }
    const polled = await fetch(other.status_url, { headers: asScoped })
    expect(polled.status).toBe(404)
    expect(JSON.stringify(await polled.json())).not.toContain('for the full key only')
    expect((await fetch(other.status_url, { method: 'DELETE', headers: asScoped })).status).toBe(404)
    for (const tool of ['get_job', 'cancel_job']) {
      const answer = await server.call(tool, { job_id: other.job_id }, { key: scopedKey })
      expect(answer.status).toBe(404)
      expect(JSON.stringify(answer.body)).not.toContain('for the full key only')
    }
    // Its own job it sees, and so does a key of the tenant without a scope.
    const own = await (await submit(server, 'list_files', {}, { key: scopedKey })).json()
    expect((await poll(own.status_url, scopedKey)).status).toBe('succeeded')
    expect((await server.call('get_job', { job_id: own.job_id }, { key: scopedKey })).status).toBe(200)
    expect((await fetch(own.status_url, { headers: { authorization: `Bearer ${keyA}` } })).status).toBe(200)
  })

  it('POSTs the finished job to callback_url with a valid signature, retrying after a failure', async () => {
    const callback = encodeURIComponent(`${receiver.url}/hook`)
    const job = await (await submit(server, 'list_files', {}, { key: keyA, query: `&callback_url=${callback}` })).json()
    for (let attempt = 0; attempt < 100 && receiverCalls < 2; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 50))
    expect(receiverCalls).toBe(2)
    const delivery = receiver.hits.filter((hit) => hit.url === '/hook').at(-1)
    const header = String(delivery?.headers['x-toolport-signature'])
    const [, timestamp, signature] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? []
    const expected = createHmac('sha256', secret).update(`${timestamp}.${delivery?.body}`).digest('hex')
    expect(signature).toBe(expected)
    expect(Math.abs(Date.now() / 1000 - Number(timestamp))).toBeLessThan(60)
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({
      job_id: job.job_id,
      status: 'succeeded',
      delivery: { id: `${job.job_id}.1`, attempt: 2 },
    })
    // Both tries carry one delivery id (receivers deduplicate by it) and their own try number.
    const tries = receiver.hits.filter((hit) => hit.url === '/hook')
    expect(
      tries.map((hit) => [hit.headers['x-toolport-delivery'], hit.headers['x-toolport-delivery-attempt']]),
    ).toEqual([
      [`${job.job_id}.1`, '1'],
      [`${job.job_id}.1`, '2'],
    ])
  })

  it('turns a synchronous call that outlasts TOOLPORT_SYNC_TIMEOUT_SECONDS into a job', async () => {
    const response = await server.call('execute_command', { command: 'date +%s%3N; sleep 2; echo late' }, { key: keyA })
    expect(response.status).toBe(202)
    expect(response.headers.get('location')).toBe(response.body.status_url)
    expect(response.body.status).toBe('running')
    const finished = await poll(response.body.status_url, keyA)
    expect(finished).toMatchObject({ status: 'succeeded', result: { stdout: expect.stringMatching(/late\n$/) } })
    // The job began with the call, before the command ran: not when it was handed over a second later.
    const commandStarted = Number(finished.result.stdout.split('\n')[0])
    expect(Date.parse(finished.created_at)).toBeLessThanOrEqual(commandStarted)
    expect(finished.started_at).toBe(finished.created_at)
  })
})

describe.each(['fs', 's3'] as const)('jobs survive a restart (%s storage)', (driver) => {
  let s3rver: S3rverInstance | undefined
  let storage: ObjectStore
  beforeAll(async () => {
    if (driver === 's3') {
      s3rver = await startS3rver()
      storage = s3StorageFor(s3rver)
    } else {
      storage = await createFsStorage({ root: await mkdtemp(`${tmpdir()}/toolport-jobs-`) })
    }
  })
  afterAll(async () => {
    await s3rver?.stop()
  })

  it('keeps finished results, and runs what a crashed process left queued', async () => {
    const first = await startTestServer({}, { storage })
    const job = await (await submit(first, 'write_file', { path: 'kept.txt', content: 'kept' })).json()
    await poll(job.status_url)
    await first.stop()
    // A job a crashed process had accepted but not started.
    const orphan = {
      id: '00000000-0000-4000-8000-000000000001',
      tenant: 'default',
      principal: { id: 'anonymous', tools: null },
      tool: 'write_file',
      workspace: 'default',
      input: { path: 'orphan.txt', content: 'picked up', mode: 'write' },
      origin: null,
      callback_url: null,
      status: 'queued' as const,
      created_at: new Date().toISOString(),
      started_at: null,
      finished_at: null,
      heartbeat_at: null,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      progress: null,
      result: null,
      error: null,
    }
    await createJobStore(storage).save(orphan)
    const second = await startTestServer({}, { storage })
    try {
      const again = await fetch(`${second.url}/v1/jobs/${job.job_id}`).then((response) => response.json())
      expect(again).toMatchObject({ status: 'succeeded', result: { path: 'kept.txt' } })
      const recovered = await poll(`${second.url}/v1/jobs/${orphan.id}`)
      expect(recovered.status).toBe('succeeded')
      expect((await second.call('read_file', { path: 'orphan.txt' })).body.content).toBe('picked up')
    } finally {
      await second.stop()
    }
  })
})
