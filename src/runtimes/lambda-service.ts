import { readFile } from 'node:fs/promises'
import type { Writable } from 'node:stream'
import type { InvokeCommandInput, LambdaClientConfig } from '@aws-sdk/client-lambda'
import { handle, type LambdaContext, type LambdaEvent, streamHandle } from 'hono/aws-lambda'
import { createApp } from '../app'
import { loadConfig } from '../config/config'
import { ToolError } from '../core/errors'
import { onFirstUse } from '../core/first-use'
import type { Logger } from '../core/logger'
import { isValidIdentifier } from '../core/paths'
import { ConfigError } from '../core/settings'
import type { DocsAssetLoader } from '../http/routes/docs'
import type { JobDispatch, JobRunner } from '../jobs/runner'
import type { JobRecord, JobStatus } from '../jobs/types'
import { isRecordId } from '../storage/json-records'
import { createS3Storage } from '../storage/s3'
import { toolNames } from '../tools/builtins'
import { createDeferredApp, type DeferredApp, type FetchApp } from './deferred'
import { serviceLogger } from './json-logger'
import { readKeySources } from './keys-source'
import { createNodeServices } from './node-services'
import { nodeSourceRuntime } from './node-sources'
import { tracingFromEnv } from './tracing'

export function lambdaLogger(env: Record<string, string | undefined>): Logger {
  return serviceLogger(env, 'lambda')
}

/** Swagger UI files copied next to the bundle by scripts/build.mjs (there is no node_modules on Lambda). */
function bundledDocsAssets(): DocsAssetLoader {
  const types: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' }
  return async (name) => {
    const body = await readFile(new URL(`./docs-assets/${name}`, import.meta.url)).catch(() => null)
    const contentType = types[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream'
    return body ? { body: new Uint8Array(body), contentType } : null
  }
}

/**
 * The event of a job's own invocation: what submit() dispatches, and what the handlers run instead of
 * handing it to Hono. Only a principal allowed lambda:InvokeFunction on this function (the function
 * itself, see infra/aws) can send one: API Gateway, ALB and function URLs wrap every HTTP request in
 * an event of their own, so no request body can pose as it.
 */
export interface JobEvent {
  toolportJob: { tenant: string; id: string }
}

export function jobEvent(job: Pick<JobRecord, 'tenant' | 'id'>): JobEvent {
  return { toolportJob: { tenant: job.tenant, id: job.id } }
}

export function isJobEvent(event: unknown): event is JobEvent {
  return typeof event === 'object' && event !== null && 'toolportJob' in event
}

/**
 * What Lambda sends an asynchronous invocation's on-failure destination once it gives up on an event
 * (the stack makes the function its own destination): the original event and why. `RetriesExhausted`:
 * every attempt failed (the invocation threw, timed out or its process died); `EventAgeExceeded`: the
 * event waited in Lambda's queue past MaximumEventAgeInSeconds (throttled, or the function failing to
 * start). Only Lambda, on the function's own configuration, sends one: HTTP requests arrive wrapped.
 */
export interface JobFailureRecord {
  requestContext: { condition: string; approximateInvokeCount?: number }
  requestPayload: JobEvent
}

export function isJobFailureRecord(event: unknown): event is JobFailureRecord {
  if (typeof event !== 'object' || event === null) return false
  const record = event as Partial<JobFailureRecord>
  return typeof record.requestContext?.condition === 'string' && isJobEvent(record.requestPayload)
}

/** What submit() sends for a job: an asynchronous (Event) invocation of this very function. */
export function selfInvocation(functionName: string, job: Pick<JobRecord, 'tenant' | 'id'>): InvokeCommandInput {
  return {
    FunctionName: functionName,
    InvocationType: 'Event',
    Payload: new TextEncoder().encode(JSON.stringify(jobEvent(job))),
  }
}

/**
 * Dispatches each job to its own invocation of `functionName`, so it runs in an execution environment
 * of its own with the function's full timeout. The Lambda client is imported on the first dispatch,
 * so cold starts that never start a job do not load it. `client` is for tests (a local endpoint); on
 * Lambda region and credentials come from the environment.
 */
export function createSelfDispatch(functionName: string, client: LambdaClientConfig = {}): JobDispatch {
  const loading = onFirstUse(() =>
    import('@aws-sdk/client-lambda').then((sdk) => ({
      lambda: new sdk.LambdaClient(client),
      Invoke: sdk.InvokeCommand,
    })),
  )
  return async (job) => {
    const { lambda, Invoke } = await loading()
    const output = await lambda.send(new Invoke(selfInvocation(functionName, job)))
    // An Event invocation is accepted with 202; anything else means it was not queued.
    if (output.StatusCode !== 202) throw new Error(`Invoke of ${functionName} answered ${output.StatusCode}`)
  }
}

function environmentDispatch(settings: Record<string, string | undefined>): JobDispatch {
  const functionName = settings.AWS_LAMBDA_FUNCTION_NAME
  if (functionName) return createSelfDispatch(functionName)
  return async () => {
    throw new Error('AWS_LAMBDA_FUNCTION_NAME is not set: jobs can only be dispatched inside AWS Lambda')
  }
}

export interface LambdaServiceOptions {
  /** How a submitted job reaches its own invocation; default: an Event invoke of AWS_LAMBDA_FUNCTION_NAME. */
  dispatch?: JobDispatch
}

/** The started service: the app, and the job runner the job invocations use. */
export interface LambdaService extends FetchApp {
  jobs: JobRunner
  /** Runs a job may have (TOOLPORT_JOB_ATTEMPTS): the stack sets Lambda's retries to this less one. */
  jobAttempts: number
  /** Sends the spans still buffered (tracing on), before the invocation ends. */
  flush(): Promise<void>
}

export async function startLambdaService(
  env: Record<string, string | undefined>,
  log: Logger,
  options: LambdaServiceOptions = {},
): Promise<LambdaService> {
  // What differs on Lambda is declared with each setting (runtime defaults): the bucket is the only
  // storage that outlives an execution environment, the process executor the only sandbox (no user
  // namespaces in Firecracker), /tmp the only writable folder, and no sync->job conversion, since the
  // environment freezes once its response is out.
  const fileKeys = await readKeySources(env, 'lambda')
  const config = loadConfig(env, { toolNames, fileKeys, runtime: 'lambda', warn: (message) => log.warn(message) })
  // A function URL is public: without keys anyone on the internet could run tools.
  if (config.apiKeys.length === 0) {
    throw new ConfigError(
      'On Lambda API keys are required: set TOOLPORT_API_KEYS_SECRET, TOOLPORT_API_KEYS or TOOLPORT_KEYS_FILE',
    )
  }
  if (config.storage.driver !== 's3' || !config.storage.s3) {
    throw new ConfigError(
      'On Lambda TOOLPORT_STORAGE must be s3 (with TOOLPORT_S3_BUCKET): /tmp does not outlive the execution environment',
    )
  }
  const storage = createS3Storage(config.storage.s3)
  const { services, shellProblem } = await createNodeServices(config, env, log, {
    shell: (config.sources.enabled ?? toolNames).includes('execute_command'),
  })
  // Loaded only when configured: a function without it never loads oidc-provider.
  const oauthServer =
    config.oauth.issuer === 'builtin'
      ? await (await import('./oauth-server/lambda-mount')).lambdaOAuthServer(config, storage, log)
      : undefined
  const tracing = await tracingFromEnv(env)
  const { app, caller, usage } = createApp({
    config,
    storage,
    log,
    ...(tracing ? { tracing } : {}),
    services,
    ...(oauthServer ? { oauthServer } : {}),
    docsAssets: bundledDocsAssets(),
    jobDispatch: options.dispatch ?? environmentDispatch(env),
    vouchedOrigin: reportedOrigin,
    ...(shellProblem ? { shellProblem } : {}),
    sources: nodeSourceRuntime(config, env, services, { keepWarm: false }),
  })
  const flush = async () => {
    await Promise.all([tracing?.flush().catch(() => {}), usage?.flush().catch(() => {})])
  }
  return {
    fetch: async (request, fetchEnv) => {
      const response = await app.fetch(request, fetchEnv)
      // An execution environment freezes once the response is sent: the call's spans and usage go out first.
      await flush()
      return response
    },
    flush,
    jobs: caller.jobs,
    // Lambda retries an asynchronous event at most twice: three runs at most, whatever the setting says.
    jobAttempts: Math.min(config.fleet.jobAttempts, 3),
  }
}

/**
 * API Gateway (REST and HTTP APIs) and function URLs report in the event the domain a request came in
 * on; Hono builds the request URL from it, and links may use it. An ALB event has only the client's Host
 * header: its links need TOOLPORT_PUBLIC_URL or TOOLPORT_ALLOWED_HOSTS.
 */
function reportedOrigin(_request: Request, env: unknown): string | undefined {
  const domain = (env as { requestContext?: { domainName?: unknown } } | undefined)?.requestContext?.domainName
  return typeof domain === 'string' && /^[A-Za-z0-9.-]+$/.test(domain) ? `https://${domain}` : undefined
}

/** What a job invocation returns (visible only to a synchronous Invoke, which toolport never makes). */
export interface JobInvocationResult {
  job_id: string
  /** null: no such job (expired or malformed event). */
  status: JobStatus | null
}

/** Time kept back from the function's timeout to store a job's failure and send its webhook. */
export function jobDeadlineMarginMs(remainingMs: number): number {
  return Math.min(20_000, remainingMs / 4)
}

export interface LambdaApp extends DeferredApp<LambdaService> {
  /**
   * Runs the job of a job event to completion in this invocation (the job runner's runStored). The job
   * is stopped, and fails with a timeout, shortly before the invocation would be killed. Rejects
   * only if the job could not be started (Lambda then retries the event).
   */
  runJob(event: JobEvent, context?: Pick<LambdaContext, 'getRemainingTimeInMillis'>): Promise<JobInvocationResult>
  /**
   * Stores as failed the job of an event Lambda gave up on (the on-failure destination's record), unless
   * it finished meanwhile, and sends its webhook. Never rejects for a record it cannot use: a destination
   * invocation that failed would only be retried into the same answer.
   */
  failJob(record: JobFailureRecord): Promise<JobInvocationResult>
}

/**
 * The app as the Lambda handlers see it: started at once (during the init phase, which runs with
 * full CPU before the first request is billed) and answering 503 problem+json if the start failed.
 */
export function createLambdaApp(
  env: Record<string, string | undefined>,
  options: LambdaServiceOptions = {},
): LambdaApp {
  const log = lambdaLogger(env)
  const deferred = createDeferredApp(() => startLambdaService(env, log, options), log)
  async function runJob(
    event: JobEvent,
    context?: Pick<LambdaContext, 'getRemainingTimeInMillis'>,
  ): Promise<JobInvocationResult> {
    const target = jobOf(event)
    if (!target.valid) return { job_id: target.id, status: null }
    const { tenant, id } = target
    const service = await deferred.started()
    const remaining = context?.getRemainingTimeInMillis?.()
    const deadline = new AbortController()
    const timer =
      remaining === undefined
        ? undefined
        : setTimeout(
            () =>
              deadline.abort(
                new ToolError('timeout', 'The job did not finish within the Lambda function timeout.', {
                  hint: 'Split the work into shorter calls, or run toolport on a server (Node, Docker), where jobs have no such limit.',
                }),
              ),
            Math.max(0, remaining - jobDeadlineMarginMs(remaining)),
          )
    try {
      const job = await service.jobs.runStored(tenant, id, {
        signal: deadline.signal,
        maxAttempts: service.jobAttempts,
      })
      log.info('job invocation', { job: id, tenant, status: job?.status ?? 'missing' })
      await service.flush()
      return { job_id: id, status: job?.status ?? null }
    } finally {
      clearTimeout(timer)
    }
  }
  function jobOf(event: JobEvent): { valid: true; tenant: string; id: string } | { valid: false; id: string } {
    const { tenant, id } = (event.toolportJob ?? {}) as Partial<JobEvent['toolportJob']>
    if (typeof tenant !== 'string' || !isValidIdentifier(tenant) || typeof id !== 'string' || !isRecordId(id)) {
      // Not retried: a malformed event stays malformed.
      log.error('malformed job event', {})
      return { valid: false, id: typeof id === 'string' ? id.slice(0, 64) : '' }
    }
    return { valid: true, tenant, id }
  }

  async function failJob(record: JobFailureRecord): Promise<JobInvocationResult> {
    const target = jobOf(record.requestPayload)
    if (!target.valid) return { job_id: target.id, status: null }
    const { condition, approximateInvokeCount } = record.requestContext
    const reason =
      condition === 'EventAgeExceeded'
        ? new ToolError('unavailable', 'The job waited too long for Lambda to run it and was dropped.', {
            hint: 'The function was throttled or could not start: submit the job again; the operator can check its concurrency and logs.',
          })
        : new ToolError(
            'unavailable',
            `The job's invocation failed ${approximateInvokeCount ?? 'several'} times (${condition.slice(0, 40)}), so Lambda stopped retrying it.`,
            {
              hint: 'Its process died or hit the function timeout each time: submit it again, or split the work; the operator finds each attempt in the function logs.',
            },
          )
    const service = await deferred.started()
    const job = await service.jobs.abandon(target.tenant, target.id, reason)
    log.warn('job given up by lambda', { job: target.id, tenant: target.tenant, condition, status: job?.status })
    return { job_id: target.id, status: job?.status ?? null }
  }

  return { ...deferred, runJob, failJob }
}

/** Routes the function's own events: a job to run, a job Lambda gave up on; undefined for anything else. */
function ownEvent(
  lambda: LambdaApp,
  event: unknown,
  context?: LambdaContext,
): Promise<JobInvocationResult> | undefined {
  if (isJobEvent(event)) return lambda.runJob(event, context)
  if (isJobFailureRecord(event)) return lambda.failJob(event)
  return undefined
}

/**
 * The buffered handler: job events run their job; everything else (API Gateway REST v1 and HTTP API
 * v2, ALB, a function URL in BUFFERED mode) goes to Hono.
 */
export function createLambdaHandler(lambda: LambdaApp) {
  const http = handle(lambda.app)
  return async (event: LambdaEvent | JobEvent | JobFailureRecord, context?: LambdaContext) =>
    ownEvent(lambda, event, context) ?? http(event as LambdaEvent, context)
}

export type StreamingHandler = (event: unknown, responseStream: Writable, context: LambdaContext) => Promise<void>

/**
 * The RESPONSE_STREAM handler (the stack's default): a function configured with it receives its job
 * events here too, so they are taken out before Hono's stream handler. `streamify` is the runtime's
 * awslambda.streamifyResponse, which marks the function it returns (Hono's is marked the same way and
 * is called like any function).
 */
export function createStreamingHandler<T>(lambda: LambdaApp, streamify: (handler: StreamingHandler) => T): T {
  const http = streamHandle(lambda.app) as unknown as StreamingHandler
  return streamify(async (event, responseStream, context) => {
    const own = ownEvent(lambda, event, context)
    if (!own) return http(event, responseStream, context)
    try {
      responseStream.end(JSON.stringify(await own))
    } catch (error) {
      responseStream.end()
      throw error
    }
  })
}
