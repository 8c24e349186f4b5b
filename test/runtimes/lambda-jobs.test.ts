import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJobStore } from '../../src/jobs/job-store'
import type { JobRecord } from '../../src/jobs/types'
import {
  createLambdaApp,
  createLambdaHandler,
  createSelfDispatch,
  createStreamingHandler,
  type JobInvocationResult,
  jobEvent,
  type LambdaApp,
  type StreamingHandler,
  selfInvocation,
} from '../../src/runtimes/lambda-service'
import { destinationRecord, type EventRequest, type EventShape, lambdaEvent } from '../support/lambda-events'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { type S3rverInstance, s3rverCredentials, s3rverEnv, s3StorageFor, startS3rver } from '../support/s3rver'

// Asynchronous jobs on Lambda: the handlers exactly as src/runtimes/lambda.ts builds them, fed
// recorded HTTP event shapes and the function's own job events, on s3rver. Lambda itself cannot run
// here, so the one stand-in is the dispatch: it records the job instead of invoking the function, and
// the test then delivers the job event the way Lambda would. The real InvokeCommand path is covered
// below against a local endpoint.
const key = 'lambda-jobs-key-0123456789'
const otherKey = 'lambda-jobs-other-0123456789'
const functionName = 'toolport-test-function'
let s3: S3rverInstance
let scratch: string
let receiver: LocalWeb
let receiverCalls = 0
const savedEnv = { ...process.env }

type HttpResult = {
  statusCode: number
  body: string
  isBase64Encoded: boolean
  headers?: Record<string, string>
  multiValueHeaders?: Record<string, string[]>
}
type Handler = ReturnType<typeof createLambdaHandler>

/** What Lambda passes: the time left before the invocation is killed. */
function context(remainingMs = 900_000) {
  return { getRemainingTimeInMillis: () => remainingMs } as never
}

function lambdaEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...s3rverEnv(s3),
    TOOLPORT_API_KEYS: `tenant-a=${key},tenant-b=${otherKey}`,
    TOOLPORT_SIGNING_SECRET: 'lambda-jobs-signing-secret-0123456789abcdef',
    TOOLPORT_DATA_DIR: join(scratch, 'data'),
    TOOLPORT_WORK_DIR: join(scratch, 'work'),
    TOOLPORT_LOG_LEVEL: 'silent',
    TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
    TOOLPORT_CALLBACK_BACKOFF_MS: '50',
    // Set, and still ignored on Lambda: a converted call would stall once the environment freezes.
    TOOLPORT_SYNC_TIMEOUT_SECONDS: '1',
    ...extra,
  }
}

function json(result: HttpResult) {
  return JSON.parse(result.isBase64Encoded ? Buffer.from(result.body, 'base64').toString('utf8') : result.body)
}

function header(result: HttpResult, name: string): string | undefined {
  return result.headers?.[name] ?? result.multiValueHeaders?.[name]?.[0]
}

/** One deployed function: its handler, and the jobs its submissions dispatched. */
async function deploy(extra: Record<string, string> = {}) {
  const dispatched: JobRecord[] = []
  const lambda = createLambdaApp(lambdaEnv(extra), {
    dispatch: async (job) => {
      dispatched.push(job)
    },
  })
  await lambda.ready
  const handler = createLambdaHandler(lambda)
  const http = (shape: EventShape, request: EventRequest) =>
    handler(lambdaEvent(shape, { key, ...request }), context()) as Promise<HttpResult>
  return { lambda, handler, http, dispatched }
}

let main: Awaited<ReturnType<typeof deploy>>

async function submit(tool: string, body: unknown, query: Record<string, string> = {}) {
  const response = await main.http('function-url', {
    path: `/v1/tools/${tool}`,
    query: { workspace: 'jobs-ws', async: 'true', ...query },
    body,
  })
  expect(response.statusCode, response.body).toBe(202)
  const job = json(response)
  expect(main.dispatched.at(-1)?.id).toBe(job.job_id)
  return job as { job_id: string; status: string; status_url: string }
}

async function getJob(id: string, as = key) {
  return main.http('http-api-v2', { method: 'GET', path: `/v1/jobs/${id}`, key: as })
}

/** Lambda delivering the job event to an invocation of its own. */
function runJob(handler: Handler, id: string, remainingMs?: number) {
  return handler(jobEvent({ tenant: 'tenant-a', id }), context(remainingMs)) as Promise<JobInvocationResult>
}

async function readFile(path: string) {
  return main.http('api-gateway-rest-v1', {
    path: '/v1/tools/read_file',
    query: { workspace: 'jobs-ws' },
    body: { path },
  })
}

beforeAll(async () => {
  s3 = await startS3rver()
  scratch = await mkdtemp(join(tmpdir(), 'toolport-lambda-jobs-'))
  receiver = await startLocalWeb({
    '/hook': (_request, response) => {
      receiverCalls++
      // The first delivery fails: the invocation retries before it ends.
      response.statusCode = receiverCalls === 1 ? 500 : 200
      response.end()
    },
    '/cancel-hook': (_request, response) => response.end(),
    '/given-up-hook': (_request, response) => response.end(),
  })
  process.env.AWS_ACCESS_KEY_ID = s3rverCredentials.accessKeyId
  process.env.AWS_SECRET_ACCESS_KEY = s3rverCredentials.secretAccessKey
  process.env.TMPDIR = join(scratch, 'tmp')
  await mkdir(process.env.TMPDIR)
  main = await deploy()
})

afterAll(async () => {
  process.env = savedEnv
  await receiver?.stop()
  await s3?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

describe('jobs on Lambda: each job in an invocation of its own', () => {
  it('answers 202 and dispatches; the job invocation runs it once; only its tenant sees it', async () => {
    const job = await submit('execute_command', { command: 'echo run >> runs.txt && cat runs.txt' })
    expect(job).toMatchObject({ status: 'queued' })
    expect(main.dispatched.at(-1)).toMatchObject({ tenant: 'tenant-a', tool: 'execute_command', status: 'queued' })

    // Nothing runs in the environment that accepted it: it is still queued until its invocation comes.
    const queued = await getJob(job.job_id)
    expect(queued.statusCode).toBe(200)
    expect(json(queued)).toMatchObject({ status: 'queued', started_at: null })
    const asOther = await getJob(job.job_id, otherKey)
    expect(asOther.statusCode).toBe(404)
    expect(json(asOther)).toMatchObject({ code: 'not_found' })

    expect(await runJob(main.handler, job.job_id)).toEqual({ job_id: job.job_id, status: 'succeeded' })
    const finished = json(await getJob(job.job_id))
    expect(finished).toMatchObject({ status: 'succeeded', result: { exit_code: 0, stdout: 'run\n' } })
    expect(finished.started_at).not.toBeNull()
    expect((await getJob(job.job_id, otherKey)).statusCode).toBe(404)

    // Lambda delivers asynchronous events at least once: a second delivery runs nothing.
    expect(await runJob(main.handler, job.job_id)).toEqual({ job_id: job.job_id, status: 'succeeded' })
    expect(json(await readFile('runs.txt')).content).toBe('run\n')
  })

  it('gives status_url the domain the function URL and API Gateway report, whatever the Host header says', async () => {
    for (const shape of ['function-url', 'http-api-v2', 'api-gateway-rest-v1'] as const) {
      const response = await main.http(shape, {
        path: '/v1/tools/list_files',
        query: { workspace: 'jobs-ws', async: 'true' },
        headers: { host: 'attacker.example' },
        body: {},
      })
      expect(response.statusCode, response.body).toBe(202)
      const domain = lambdaEvent(shape, { path: '/' }).requestContext.domainName
      const job = json(response)
      expect(job.status_url).toBe(`https://${domain}/v1/jobs/${job.job_id}`)
      expect(header(response, 'location')).toBe(job.status_url)
      const polled = json(
        await main.http(shape, {
          method: 'GET',
          path: `/v1/jobs/${job.job_id}`,
          headers: { host: 'attacker.example' },
        }),
      )
      expect(polled.status_url).toBe(job.status_url)
    }
  })

  it('stores a failure as the problem document', async () => {
    const job = await submit('read_file', { path: 'missing.txt' })
    expect((await runJob(main.handler, job.job_id)).status).toBe('failed')
    expect(json(await getJob(job.job_id))).toMatchObject({
      status: 'failed',
      error: { code: 'not_found', status: 404 },
    })
  })

  it('does not run a job cancelled before its invocation came, and its invocation sends the webhook', async () => {
    const callback = `${receiver.url}/cancel-hook`
    const job = await submit('execute_command', { command: 'echo ran > cancelled.txt' }, { callback_url: callback })
    const cancelled = await main.http('function-url', { method: 'DELETE', path: `/v1/jobs/${job.job_id}` })
    expect(json(cancelled)).toMatchObject({ status: 'cancelled' })
    // The environment that answered DELETE may freeze at once: it leaves the webhook to the job's invocation.
    expect(receiver.hits.filter((hit) => hit.url === '/cancel-hook')).toEqual([])

    expect(await runJob(main.handler, job.job_id)).toEqual({ job_id: job.job_id, status: 'cancelled' })
    expect(json(await getJob(job.job_id))).toMatchObject({ status: 'cancelled', started_at: null })
    expect((await readFile('cancelled.txt')).statusCode).toBe(404)
    const hooks = receiver.hits.filter((hit) => hit.url === '/cancel-hook')
    expect(hooks.map((hit) => JSON.parse(hit.body))).toEqual([
      expect.objectContaining({ job_id: job.job_id, status: 'cancelled' }),
    ])
  })

  it('delivers the webhook, retried, before the invocation ends', async () => {
    const job = await submit('list_files', {}, { callback_url: `${receiver.url}/hook` })
    expect((await runJob(main.handler, job.job_id)).status).toBe('succeeded')
    // No waiting: once the invocation has returned, Lambda may freeze it, so the delivery is done.
    expect(receiverCalls).toBe(2)
    const delivery = receiver.hits.filter((hit) => hit.url === '/hook').at(-1)
    expect(String(delivery?.headers['x-toolport-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({ job_id: job.job_id, status: 'succeeded' })
  })

  it('stops a job shortly before the function timeout and stores it as timed out', async () => {
    const marker = '432.1'
    const job = await submit('execute_command', { command: `sleep ${marker}`, timeout_seconds: 600 })
    // 2 s left: the job gets 1.5 s, the rest is kept to store the failure.
    expect((await runJob(main.handler, job.job_id, 2000)).status).toBe('failed')
    expect(json(await getJob(job.job_id))).toMatchObject({ status: 'failed', error: { code: 'timeout', status: 504 } })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(`sleep ${marker}`))
    expect(left).toEqual([])
  })

  it('stops a running job cancelled through another execution environment', async () => {
    const marker = '321.9'
    const job = await submit('execute_command', { command: `sleep ${marker}`, timeout_seconds: 600 })
    const worker = await deploy()
    const running = runJob(worker.handler, job.job_id)
    for (let attempt = 0; attempt < 100 && json(await getJob(job.job_id)).status !== 'running'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const cancelled = await main.http('function-url', { method: 'DELETE', path: `/v1/jobs/${job.job_id}` })
    expect(json(cancelled)).toMatchObject({ status: 'cancelled' })
    // The job's invocation sees the cancel at its next heartbeat (every 10 s) and kills the command.
    expect(await running).toEqual({ job_id: job.job_id, status: 'cancelled' })
    // SIGKILL is sent at once; give the kernel a moment to reap the group.
    const left = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes(`sleep ${marker}`))
    for (let attempt = 0; attempt < 30 && left().length > 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 100))
    expect(left()).toEqual([])
    expect(json(await getJob(job.job_id)).status).toBe('cancelled')
  }, 30_000)

  it('runs job events through the RESPONSE_STREAM handler too', async () => {
    const job = await submit('write_file', { path: 'streamed-job.txt', content: 'from the streaming handler' })
    Object.assign(globalThis, {
      awslambda: { streamifyResponse: (handler: unknown) => handler, HttpResponseStream: { from: (s: unknown) => s } },
    })
    try {
      const streaming = createStreamingHandler(main.lambda, (inner: StreamingHandler) => inner)
      const sink = new PassThrough()
      const chunks: Buffer[] = []
      sink.on('data', (chunk: Buffer) => chunks.push(chunk))
      await streaming(jobEvent({ tenant: 'tenant-a', id: job.job_id }), sink, context())
      expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toEqual({ job_id: job.job_id, status: 'succeeded' })
      expect(sink.writableEnded).toBe(true)
    } finally {
      Reflect.deleteProperty(globalThis, 'awslambda')
    }
    expect(json(await readFile('streamed-job.txt')).content).toBe('from the streaming handler')
  })

  it('runs the retry of an event whose earlier run died as the next attempt, and a duplicate of it runs nothing', async () => {
    const storage = s3StorageFor(s3)
    const job = await submit('execute_command', { command: 'echo retried >> retried.txt' })
    // The first invocation marked it running and its process died (no heartbeat since): Lambda retries
    // the event about a minute later, by when the heartbeat is stale.
    await createJobStore(storage).update('tenant-a', job.job_id, (current) =>
      current
        ? {
            ...current,
            status: 'running',
            started_at: new Date(Date.now() - 90_000).toISOString(),
            heartbeat_at: new Date(Date.now() - 60_000).toISOString(),
            attempt: 1,
          }
        : undefined,
    )
    expect((await runJob(main.handler, job.job_id)).status).toBe('succeeded')
    expect(json(await getJob(job.job_id))).toMatchObject({ status: 'succeeded', attempt: 2, max_attempts: 3 })
    expect((await runJob(main.handler, job.job_id)).status).toBe('succeeded')
    expect(json(await readFile('retried.txt')).content).toBe('retried\n')
  })

  it('marks a job failed when Lambda gives up on its event, says why, and sends its webhook', async () => {
    const hook = `${receiver.url}/given-up-hook`
    const exhausted = await submit('write_file', { path: 'never-1.txt', content: 'x' }, { callback_url: hook })
    const aged = await submit('write_file', { path: 'never-2.txt', content: 'x' }, { callback_url: hook })
    const target = (id: string) => ({ tenant: 'tenant-a', id })
    const first = await main.handler(
      destinationRecord('destination-retries-exhausted', target(exhausted.job_id)),
      context(),
    )
    expect(first).toEqual({ job_id: exhausted.job_id, status: 'failed' })
    expect(json(await getJob(exhausted.job_id))).toMatchObject({
      status: 'failed',
      error: { code: 'unavailable', detail: expect.stringContaining('failed 3 times (RetriesExhausted)') },
    })
    const second = await main.handler(
      destinationRecord('destination-event-age-exceeded', target(aged.job_id)),
      context(),
    )
    expect(second).toEqual({ job_id: aged.job_id, status: 'failed' })
    expect(json(await getJob(aged.job_id)).error.detail).toContain('waited too long')
    const hooks = receiver.hits.filter((hit) => hit.url === '/given-up-hook').map((hit) => JSON.parse(hit.body))
    expect(hooks).toEqual([
      expect.objectContaining({ job_id: exhausted.job_id, status: 'failed' }),
      expect.objectContaining({ job_id: aged.job_id, status: 'failed' }),
    ])
    // A job that finished before the record came keeps its outcome (and sends nothing again).
    const done = await submit('write_file', { path: 'done-before.txt', content: 'x' }, { callback_url: hook })
    expect((await runJob(main.handler, done.job_id)).status).toBe('succeeded')
    const late = await main.handler(destinationRecord('destination-retries-exhausted', target(done.job_id)), context())
    expect(late).toEqual({ job_id: done.job_id, status: 'succeeded' })
    expect(receiver.hits.filter((hit) => hit.url === '/given-up-hook')).toHaveLength(3)
    // A record for another tenant's job id or a malformed one changes nothing.
    const foreign = destinationRecord('destination-retries-exhausted', { tenant: 'tenant-b', id: aged.job_id })
    expect(await main.handler(foreign, context())).toEqual({ job_id: aged.job_id, status: null })
    const malformed = destinationRecord('destination-retries-exhausted', { tenant: '../x', id: 'y' })
    expect(await main.handler(malformed, context())).toMatchObject({ status: null })
  })

  it('does not turn slow synchronous calls into jobs (the environment freezes after the response)', async () => {
    const response = await main.http('function-url', {
      path: '/v1/tools/execute_command',
      query: { workspace: 'jobs-ws' },
      body: { command: 'sleep 1.5; echo late' },
    })
    expect(response.statusCode).toBe(200)
    expect(json(response)).toMatchObject({ stdout: 'late\n' })
    expect(header(response, 'location')).toBeUndefined()
  })

  it('leaves queued jobs alone on a cold start: each belongs to its own invocation', async () => {
    const storage = s3StorageFor(s3)
    const job = await submit('write_file', { path: 'left-queued.txt', content: 'run by its invocation' })
    const cold = await deploy()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect((await createJobStore(storage).load('tenant-a', job.job_id))?.status).toBe('queued')
    expect((await readFile('left-queued.txt')).statusCode).toBe(404)
    expect((await runJob(cold.handler, job.job_id)).status).toBe('succeeded')
  })

  it('ignores a malformed or unknown job event without failing the invocation', async () => {
    expect(await main.handler({ toolportJob: { tenant: '../x', id: 'abc' } } as never, context())).toMatchObject({
      status: null,
    })
    expect(await runJob(main.handler, '00000000-0000-4000-8000-00000000dead')).toEqual({
      job_id: '00000000-0000-4000-8000-00000000dead',
      status: null,
    })
  })

  it('answers 503 and keeps no job when the dispatch fails', async () => {
    const failing: LambdaApp = createLambdaApp(lambdaEnv(), {
      dispatch: async () => {
        throw new Error('throttled')
      },
    })
    await failing.ready
    const storage = s3StorageFor(s3)
    const before = (await createJobStore(storage).all()).length
    const response = (await createLambdaHandler(failing)(
      lambdaEvent('function-url', {
        path: '/v1/tools/list_files',
        query: { async: 'true' },
        body: {},
        key,
      }),
      context(),
    )) as HttpResult
    expect(response.statusCode).toBe(503)
    expect(json(response)).toMatchObject({ code: 'unavailable' })
    expect((await createJobStore(storage).all()).length).toBe(before)
  })
})

describe('self-invocation through @aws-sdk/client-lambda', () => {
  it('builds an asynchronous Invoke of the function with the job event as payload', () => {
    const input = selfInvocation(functionName, { tenant: 'tenant-a', id: 'job-0123456789' })
    expect(input).toMatchObject({ FunctionName: functionName, InvocationType: 'Event' })
    expect(JSON.parse(new TextDecoder().decode(input.Payload as Uint8Array))).toEqual({
      toolportJob: { tenant: 'tenant-a', id: 'job-0123456789' },
    })
  })

  it('sends the InvokeCommand (real client, local endpoint) and fails when it is not accepted', async () => {
    let accept = true
    const lambdaApi = await startLocalWeb({
      [`/2015-03-31/functions/${functionName}/invocations`]: (_request, response) => {
        if (accept) {
          response.statusCode = 202
          response.end()
          return
        }
        response.statusCode = 403
        response.setHeader('x-amzn-errortype', 'AccessDeniedException')
        response.setHeader('content-type', 'application/json')
        response.end(JSON.stringify({ Message: 'not allowed' }))
      },
    })
    try {
      const dispatch = createSelfDispatch(functionName, {
        endpoint: lambdaApi.url,
        region: 'eu-central-1',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
      })
      const job = { tenant: 'tenant-a', id: '00000000-0000-4000-8000-000000000042' } as JobRecord
      await dispatch(job)
      const [request] = lambdaApi.hits
      expect(request).toMatchObject({ method: 'POST', url: `/2015-03-31/functions/${functionName}/invocations` })
      expect(request?.headers['x-amz-invocation-type']).toBe('Event')
      expect(request?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 .*\/eu-central-1\/lambda\/aws4_request/)
      expect(JSON.parse(request?.body ?? '')).toEqual({ toolportJob: { tenant: 'tenant-a', id: job.id } })

      accept = false
      await expect(dispatch(job)).rejects.toThrow(/not allowed/)
    } finally {
      await lambdaApi.stop()
    }
  })
})
