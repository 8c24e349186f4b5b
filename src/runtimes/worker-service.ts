import { createApp } from '../app'
import { ConfigError, loadConfig } from '../config/config'
import { createJsonLogger, type LogLevel } from '../log'
import { createFetchHttpClient } from '../net/fetch-http'
import { createConfiguredSearch } from '../net/search/configured'
import { createR2Storage, type R2BucketLike } from '../storage/r2'
import { fileTools } from '../tools/files'
import { noServices } from '../tools/services'
import { getEnv } from '../tools/system/system-tools'
import type { Logger, Tool } from '../tools/tool'
import { httpFetch } from '../tools/web/http-fetch'
import { webFetch } from '../tools/web/web-fetch'
import { webSearch } from '../tools/web/web-search'
import type { FetchApp } from './deferred'

/**
 * The catalog on Workers: only tools that run in workerd. execute_command (needs processes) and
 * system_info (needs node:os) are left out, so they are absent from /openapi.json rather than
 * present and failing.
 */
export const workerTools: readonly Tool[] = [...fileTools, httpFetch, webFetch, webSearch, getEnv]

/** The R2 bucket binding's name in wrangler.toml. */
export const bucketBinding = 'TOOLPORT_BUCKET'

export function workerLogger(env: Record<string, unknown>): Logger {
  const level = typeof env.TOOLPORT_LOG_LEVEL === 'string' ? (env.TOOLPORT_LOG_LEVEL as LogLevel) : 'info'
  return createJsonLogger(level, { service: 'toolport' })
}

function isBucket(value: unknown): value is R2BucketLike {
  return typeof value === 'object' && value !== null && typeof (value as R2BucketLike).get === 'function'
}

export async function startWorkerService(env: Record<string, unknown>, log: Logger): Promise<FetchApp> {
  // Vars and secrets are strings; bindings (the bucket) are objects and stay out of the config.
  const settings: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (typeof value === 'string') settings[name] = value
  // Storage is always the bound R2 bucket here; the Node storage settings do not apply.
  delete settings.TOOLPORT_STORAGE
  const bucket = env[bucketBinding]
  if (!isBucket(bucket))
    throw new ConfigError(`No R2 bucket bound as ${bucketBinding} (see infra/cloudflare/wrangler.toml)`)
  const config = loadConfig(settings, { toolNames: workerTools.map((tool) => tool.name) })
  // A workers.dev URL is public: without keys anyone on the internet could use the bucket.
  if (config.apiKeys.length === 0) {
    throw new ConfigError('On Workers API keys are required: wrangler secret put TOOLPORT_API_KEYS')
  }
  const http = createFetchHttpClient({ policy: { allowHosts: config.web.allowHosts } })
  return createApp({
    config,
    storage: createR2Storage(bucket),
    log,
    tools: workerTools.filter((tool) => !config.tools || config.tools.includes(tool.name)),
    services: {
      ...noServices,
      http,
      search: createConfiguredSearch(config.web, http, (policy) => createFetchHttpClient({ policy })),
      environment: config.web.env,
    },
  })
}
