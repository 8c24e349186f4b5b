import { createApp } from '../app'
import { loadConfig } from '../config/config'
import type { Logger } from '../core/logger'
import { ConfigError } from '../core/settings'
import type { JobRunner } from '../jobs/runner'
import { createFetchHttpClient } from '../net/fetch-http'
import { createConfiguredSearch } from '../net/search/configured'
import { createR2Storage, type R2BucketLike } from '../storage/r2'
import { fileTools } from '../tools/files'
import { noServices } from '../tools/services'
import { getEnv } from '../tools/system/system-tools'
import type { Tool } from '../tools/tool'
import { httpFetch } from '../tools/web/http-fetch'
import { webFetch } from '../tools/web/web-fetch'
import { webSearch } from '../tools/web/web-search'
import type { FetchApp } from './deferred'
import { serviceLogger } from './json-logger'
import { deadLetterQueueVar, isQueueProducer, jobQueueBinding, noQueueDispatch, queueDispatch } from './worker-jobs'

/**
 * The catalog on Workers: only tools that run in workerd. execute_command (needs processes) and
 * system_info (needs node:os) are left out, so they are absent from /openapi.json rather than
 * present and failing.
 */
export const workerTools: readonly Tool[] = [...fileTools, httpFetch, webFetch, webSearch, getEnv]

/** The R2 bucket binding's name in wrangler.toml. */
export const bucketBinding = 'TOOLPORT_BUCKET'

/** Vars and secrets are strings; bindings (the bucket) are objects and stay out of the config. */
function stringSettings(env: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  )
}

export function workerLogger(env: Record<string, unknown>): Logger {
  return serviceLogger(stringSettings(env), 'workers')
}

function isBucket(value: unknown): value is R2BucketLike {
  return typeof value === 'object' && value !== null && typeof (value as R2BucketLike).get === 'function'
}

/** The started Worker: the app, and what its Queue consumer runs jobs with. */
export interface WorkerService extends FetchApp {
  jobs: JobRunner
  jobAttempts: number
  /** The dead-letter queue's name (TOOLPORT_JOBS_DEAD_LETTER_QUEUE): its batches fail their jobs. */
  deadLetterQueue: string | undefined
}

export async function startWorkerService(env: Record<string, unknown>, log: Logger): Promise<WorkerService> {
  const bucket = env[bucketBinding]
  if (!isBucket(bucket))
    throw new ConfigError(`No R2 bucket bound as ${bucketBinding} (see infra/cloudflare/wrangler.toml)`)
  // Storage is always the bound R2 bucket here: TOOLPORT_STORAGE is fixed to r2 on Workers.
  const config = loadConfig(stringSettings(env), {
    toolNames: workerTools.map((tool) => tool.name),
    runtime: 'workers',
    warn: (message) => log.warn(message),
  })
  // A workers.dev URL is public: without keys anyone on the internet could use the bucket.
  if (config.apiKeys.length === 0) {
    throw new ConfigError('On Workers API keys are required: wrangler secret put TOOLPORT_API_KEYS')
  }
  const http = createFetchHttpClient({ policy: { allowHosts: config.net.allowHosts } })
  // Jobs run in the Queue consumer (this Worker's queue handler), never in the isolate that answered
  // 202: it may stop once its response is out.
  const queue = env[jobQueueBinding]
  const { app, caller, usage } = createApp({
    config,
    storage: createR2Storage(bucket),
    log,
    tools: workerTools.filter((tool) => !config.sources.enabled || config.sources.enabled.includes(tool.name)),
    // Cloudflare hands a Worker only requests for the hosts routed to it (its routes, custom domains,
    // workers.dev): the request's own origin is one the operator chose.
    vouchedOrigin: (request) => new URL(request.url).origin,
    jobDispatch: isQueueProducer(queue) ? queueDispatch(queue) : noQueueDispatch,
    services: {
      ...noServices,
      http,
      search: createConfiguredSearch(config.search, config.net.allowHosts, http, (policy) =>
        createFetchHttpClient({ policy }),
      ),
      environment: config.environment.variables,
    },
  })
  const deadLetterQueue = env[deadLetterQueueVar]
  return {
    fetch: async (request, fetchEnv) => {
      const response = await app.fetch(request, fetchEnv)
      // An isolate may stop once its response is out: what the request counted is written first.
      await usage?.flush().catch(() => {})
      return response
    },
    jobs: caller.jobs,
    jobAttempts: config.fleet.jobAttempts,
    deadLetterQueue: typeof deadLetterQueue === 'string' && deadLetterQueue !== '' ? deadLetterQueue : undefined,
  }
}
