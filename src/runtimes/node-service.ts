import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import type { OpenAPIHono } from '@hono/zod-openapi'
import { createApp } from '../app'
import { type Config, loadConfig, parseKeysFile } from '../config/config'
import type { AppEnv } from '../http/env'
import type { Lifecycle } from '../http/middleware/operations'
import type { DocsAssetLoader } from '../http/routes/docs'
import { createJsonLogger, type LogLevel } from '../log'
import type { PolicyWorkerOptions } from '../sandbox/policy/command-lister'
import { createFsStorage } from '../storage/fs'
import { createMemoryStorage } from '../storage/memory'
import { createS3Storage } from '../storage/s3'
import type { ObjectStore } from '../storage/store'
import { toolNames } from '../tools/builtins'
import type { Logger } from '../tools/tool'
import { createNodeMetrics } from './node-metrics'
import { createNodeServices } from './node-services'

export interface NodeService {
  app: OpenAPIHono<AppEnv>
  config: Config
  storage: ObjectStore
  log: Logger
}

async function createStorage(config: Config): Promise<ObjectStore> {
  switch (config.storage) {
    case 'memory':
      return createMemoryStorage()
    case 's3':
      return createS3Storage(config.s3 as NonNullable<Config['s3']>)
    default:
      return createFsStorage({ root: resolve(config.dataDir) })
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
  options: { policyWorker?: PolicyWorkerOptions } = {},
): Promise<NodeService> {
  const log = createJsonLogger((env.TOOLPORT_LOG_LEVEL as LogLevel | undefined) ?? 'info', { service: 'toolport' })
  const fileKeys = env.TOOLPORT_KEYS_FILE
    ? parseKeysFile(await readFile(env.TOOLPORT_KEYS_FILE, 'utf8'), `TOOLPORT_KEYS_FILE ${env.TOOLPORT_KEYS_FILE}`)
    : undefined
  const config = loadConfig(env, { toolNames, ...(fileKeys ? { fileKeys } : {}) })
  const storage = await createStorage(config)
  if (config.apiKeys.length === 0) {
    log.warn('authentication is off: no API keys are configured, so only loopback clients are served', {
      host: config.host,
    })
  }
  const { services, shellProblem } = await createNodeServices(config, env, log, {
    shell: (config.tools ?? toolNames).includes('execute_command'),
    ...options,
  })
  const app = createApp({
    config,
    storage,
    log,
    docsAssets: swaggerUiAssets(),
    services,
    metrics: createNodeMetrics(() => services),
    ...(lifecycle ? { lifecycle } : {}),
    ...(shellProblem ? { shellProblem } : {}),
  })
  return { app, config, storage, log }
}
