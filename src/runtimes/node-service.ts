import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import type { OpenAPIHono } from '@hono/zod-openapi'
import { createApp, createAppAudit } from '../app'
import { type Config, loadConfig } from '../config/config'
import type { Logger } from '../core/logger'
import type { AppEnv } from '../http/env'
import type { Lifecycle } from '../http/middleware/drain'
import type { DocsAssetLoader } from '../http/routes/docs'
import { deliverOnce } from '../jobs/callback'
import type { PolicyWorkerOptions } from '../sandbox/policy/command-lister'
import { createFsStorage } from '../storage/fs'
import { createMemoryStorage } from '../storage/memory'
import type { StorageSettings } from '../storage/settings'
import type { ObjectStore } from '../storage/store'
import { toolNames } from '../tools/builtins'
import { serviceLogger } from './json-logger'
import { readKeySources } from './keys-source'
import { createNodeMetrics } from './node-metrics'
import { createNodeServices } from './node-services'
import { nodeSourceRuntime, watchSourcesFolder } from './node-sources'
import type { OffloadWorkerOptions } from './offload-pool'
import type { TraceExportWorkerOptions } from './otel-worker-sink'
import { tracingFromEnv } from './tracing'

export interface NodeService {
  app: OpenAPIHono<AppEnv>
  config: Config
  storage: ObjectStore
  log: Logger
  /** Stops watching the sources folder and closes the sources' connections and processes. */
  close(): Promise<void>
}

/** The bucket the settings name (also what `toolport audit` reads). */
export async function createStorage(settings: StorageSettings): Promise<ObjectStore> {
  switch (settings.driver) {
    case 'memory':
      return createMemoryStorage()
    case 's3': {
      // The AWS SDK loads only for a bucket: a service on the fs driver never pays for it.
      const { createS3Storage } = await import('../storage/s3')
      return createS3Storage(settings.s3 as NonNullable<StorageSettings['s3']>)
    }
    default:
      return createFsStorage({ root: resolve(settings.dataDir) })
  }
}

/** Serves the Swagger UI files from the installed swagger-ui-dist package: no CDN needed. */
function swaggerUiAssets(): DocsAssetLoader {
  const require = createRequire(import.meta.url)
  const folder = dirname(require.resolve('swagger-ui-dist/package.json'))
  const types: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8' }
  return async (name) => {
    const extension = name.slice(name.lastIndexOf('.'))
    const body = await readFile(join(folder, name)).catch(() => null)
    return body ? { body: new Uint8Array(body), contentType: types[extension] ?? 'application/octet-stream' } : null
  }
}

export async function startNodeService(
  env: Record<string, string | undefined>,
  lifecycle?: Lifecycle,
  options: {
    policyWorker?: PolicyWorkerOptions
    offloadWorker?: OffloadWorkerOptions
    traceExportWorker?: TraceExportWorkerOptions
  } = {},
): Promise<NodeService> {
  const log = serviceLogger(env, 'node')
  const fileKeys = await readKeySources(env, 'node')
  const config = loadConfig(env, { toolNames, fileKeys, runtime: 'node', warn: (message) => log.warn(message) })
  const storage = await createStorage(config.storage)
  if (config.apiKeys.length === 0) {
    log.warn('authentication is off: no API keys are configured, so only loopback clients are served', {
      host: config.http.host,
    })
  }
  // The fleet engine loads only when configured: a single instance never imports BullMQ or ioredis.
  const redisUrl = config.fleet.redisUrl
  const fleet = redisUrl
    ? (await import('./fleet/redis-engine')).createRedisEngine(
        {
          ...config.fleet,
          redisUrl,
          callbackAttempts: config.jobs.callbackAttempts,
          callbackBackoffMs: config.jobs.callbackBackoffMs,
          jobsPerTenant: config.jobs.perTenant,
          jobTtlSeconds: config.jobs.ttlSeconds,
        },
        { log, concurrency: config.jobs.concurrency },
      )
    : undefined
  const {
    services,
    shellProblem,
    close: closeServices,
  } = await createNodeServices(config, env, log, {
    shell: needsSandbox(config),
    ...(options.policyWorker ? { policyWorker: options.policyWorker } : {}),
    ...(options.offloadWorker ? { offloadWorker: options.offloadWorker } : {}),
    ...(fleet ? { sessionRegistry: fleet.sessions } : {}),
  })
  // Shared with the built-in authorization server, whose sign-ins it keeps.
  const audit = createAppAudit(config, storage, log)
  // oidc-provider loads only with the built-in server configured.
  const oauthServer =
    config.oauth.issuer === 'builtin'
      ? await (await import('./oauth-server/mount')).nodeOAuthServer(config, storage, log, fleet, audit)
      : undefined
  const tracing = await tracingFromEnv(
    env,
    options.traceExportWorker ? { exportWorker: options.traceExportWorker } : {},
  )
  if (tracing) log.info('tracing: OpenTelemetry over OTLP/HTTP')
  const { app, sources, caller, usage } = createApp({
    config,
    storage,
    log,
    audit,
    ...(tracing ? { tracing } : {}),
    ...(oauthServer ? { oauthServer } : {}),
    docsAssets: swaggerUiAssets(),
    services,
    ...(config.process.metrics ? { metrics: createNodeMetrics(() => services) } : {}),
    ...(lifecycle ? { lifecycle } : {}),
    ...(shellProblem ? { shellProblem } : {}),
    sources: nodeSourceRuntime(config, env, services),
    ...(fleet ? { fleet } : {}),
  })
  const http = services.http
  const secret = config.downloads.signingSecret
  fleet?.startWorker(caller.jobs, (delivery, tryNumber) =>
    http && secret ? deliverOnce(delivery, tryNumber, { http, secret }) : Promise.resolve(false),
  )
  if (fleet) log.info('fleet engine: redis', { prefix: config.fleet.redisPrefix })
  if (fleet && !secret) {
    log.warn('TOOLPORT_SIGNING_SECRET is not set: a fleet needs one secret, so job callbacks are not sent')
  }
  const folder =
    sources && config.sources.sourcesDir
      ? await watchSourcesFolder(sources, config.sources.sourcesDir, config.sources.refreshMs, log)
      : undefined
  return {
    app,
    config,
    storage,
    log,
    async close() {
      folder?.close()
      await sources?.close()
      await fleet?.close()
      await closeServices()
      await usage?.close().catch(() => {})
      // What is still buffered goes out before the process ends.
      await tracing?.flush().catch(() => {})
    },
  }
}

/** The sandbox is set up when something may run programs: execute_command, or sources of the operator or tenants. */
function needsSandbox(config: Config): boolean {
  return (
    (config.sources.enabled ?? toolNames).includes('execute_command') ||
    config.sources.sourcesDir !== undefined ||
    config.sources.tenantKinds.some((kind) => kind === 'command' || kind === 'mcp-stdio' || kind === 'worker')
  )
}
