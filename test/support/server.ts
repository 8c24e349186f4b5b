import { chmod, mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { createApp, createAppAudit, type SourceRuntime } from '../../src/app'
import type { AuditLog } from '../../src/audit/audit-log'
import type { ApiKey } from '../../src/auth/keys'
import type { Caller } from '../../src/caller/caller'
import { loadConfig } from '../../src/config/config'
import { type Logger, silentLogger } from '../../src/core/logger'
import type { Resolver } from '../../src/net/node-http'
import { createNodeMetrics } from '../../src/runtimes/node-metrics'
import { createNodeServices } from '../../src/runtimes/node-services'
import { nodeSourceRuntime, watchSourcesFolder } from '../../src/runtimes/node-sources'
import { tracingFromEnv } from '../../src/runtimes/tracing'
import type { SourceHost } from '../../src/sources/host/source-host'
import { createFsStorage } from '../../src/storage/fs'
import type { ObjectStore } from '../../src/storage/store'
import { toolNames } from '../../src/tools/builtins'
import type { ToolServices } from '../../src/tools/services'
import type { Tool } from '../../src/tools/tool'
import type { UsageLedger } from '../../src/usage/usage-meter'
import { createResponseCheck } from './response-check'

export interface TestServer {
  url: string
  storage: ObjectStore
  dataDir: string
  /** The app's live sources (undefined when the suite turned them off). */
  sources: SourceHost | undefined
  /** The app's caller, for what no transport lets a client do (run a call that skipped admission). */
  caller: Caller
  /** The app's audit log (undefined with TOOLPORT_AUDIT=false). */
  audit: AuditLog | undefined
  /** The app's usage ledger: a suite flushes it to read what another instance sees. */
  usage: UsageLedger | undefined
  /** POSTs JSON to a tool and returns status, headers and parsed body. */
  call(tool: string, body: unknown, options?: CallOptions): Promise<CallResult>
  stop(): Promise<void>
}

export interface CallOptions {
  key?: string
  workspace?: string
  headers?: Record<string, string>
}

export interface CallResult {
  status: number
  headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
  body: any
}

/** A real toolport HTTP server on 127.0.0.1 with fs storage in a fresh temp folder. */
export async function startTestServer(
  env: Record<string, string> = {},
  options: {
    fileKeys?: ApiKey[]
    storage?: ObjectStore
    shell?: boolean
    /** Replaces the catalog (e.g. with a test-only tool). */
    tools?: readonly Tool[]
    services?: Partial<ToolServices>
    /** DNS answers for the sandbox's egress proxy (names of test fixtures on loopback). */
    egressResolve?: Resolver
    /** Serve /metrics (prom-client), as the Node service does by default. */
    metrics?: boolean
    /** Overrides of what the runtime lends sources (keepWarm: false is how Lambda runs them). */
    sourceRuntime?: Partial<SourceRuntime>
    /**
     * Check every answer against openapi/openapi.json (default true). Benchmarks turn it off: the
     * clone and the schema validation of each answer are the suite's cost, not the service's.
     */
    checkResponses?: boolean
    /** Listen on this port (a suite whose TOOLPORT_PUBLIC_URL must be the server's own address); default any. */
    port?: number
    /** Where the service logs (a suite that checks what is logged); default nowhere. */
    log?: Logger
  } = {},
): Promise<TestServer> {
  const log = options.log ?? silentLogger
  const dataDir = await mkdtemp(join(tmpdir(), 'toolport-test-'))
  // The sandbox user must be able to reach the work folder inside it.
  await chmod(dataDir, 0o711)
  const config = loadConfig(
    { PORT: '0', TOOLPORT_DATA_DIR: dataDir, TOOLPORT_WORK_DIR: join(dataDir, 'work'), ...env },
    { toolNames, ...(options.fileKeys ? { fileKeys: options.fileKeys } : {}) },
  )
  const storage = options.storage ?? (await createFsStorage({ root: join(dataDir, 'data') }))
  // The sandbox is set up only where a suite asks for it: bwrap probing costs a few hundred ms.
  // Heavy tool work runs in worker threads, as on a real server (the event-loop test measures it).
  const node = await createNodeServices(config, process.env, log, {
    shell: options.shell ?? false,
    offloadWorker: { url: new URL('../../src/runtimes/offload-worker.ts', import.meta.url), typescript: true },
    ...(options.egressResolve ? { egressResolve: options.egressResolve } : {}),
  })
  if (options.shell && !node.services.shell) throw new Error(`no sandbox for the test server: ${node.shellProblem}`)
  const services = { ...node.services, ...options.services }
  // One audit log for the app and the authorization server, as the Node service makes it.
  const sharedAudit = createAppAudit(config, storage, log)
  const oauthServer =
    config.oauth.issuer === 'builtin'
      ? await (await import('../../src/runtimes/oauth-server/mount')).nodeOAuthServer(
          config,
          storage,
          log,
          undefined,
          sharedAudit,
        )
      : undefined
  // Tracing as the Node service turns it on: from the OTEL_* variables a suite passes, exported from
  // the worker thread the service uses (its source, through tsx).
  const tracing = await tracingFromEnv(env, {
    exportWorker: { url: new URL('../../src/runtimes/otel-export-worker.ts', import.meta.url), typescript: true },
  })
  const { app, caller, sources, audit, usage } = createApp({
    config,
    storage,
    log,
    audit: sharedAudit,
    ...(tracing ? { tracing } : {}),
    ...(oauthServer ? { oauthServer } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    services,
    sources: { ...nodeSourceRuntime(config, process.env, services), ...options.sourceRuntime },
    ...(options.metrics ? { metrics: createNodeMetrics(() => services) } : {}),
  })
  const folder =
    sources && config.sources.sourcesDir
      ? await watchSourcesFolder(sources, config.sources.sourcesDir, config.sources.refreshMs, log)
      : undefined
  // Every answer on a documented route is checked against openapi/openapi.json (response-check.ts).
  const responses = createResponseCheck()
  const checked = async (request: Request, env: unknown) => {
    if (options.checkResponses === false) return app.fetch(request, env as never)
    const response = await app.fetch(request, env as never)
    const path = new URL(request.url).pathname
    if (responses.covers(path)) {
      const contentType = response.headers.get('content-type') ?? ''
      if (!contentType.startsWith('text/event-stream')) {
        responses.check(request.method, path, response.status, contentType, await response.clone().text())
      }
    }
    return response
  }
  const server = serve({ fetch: checked, port: options.port ?? 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    storage,
    dataDir,
    sources,
    caller,
    audit,
    usage,
    async call(tool, body, callOptions = {}) {
      const query = callOptions.workspace === undefined ? '' : `?workspace=${encodeURIComponent(callOptions.workspace)}`
      const response = await fetch(`${url}/v1/tools/${tool}${query}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(callOptions.key ? { authorization: `Bearer ${callOptions.key}` } : {}),
          ...callOptions.headers,
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      })
      const text = await response.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {}
      return { status: response.status, headers: response.headers, body: parsed }
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      // fetch keeps connections alive; close them or server.close waits for their idle timeout.
      if ('closeAllConnections' in server) server.closeAllConnections()
      await closed
      if (responses.violations.length > 0) {
        throw new Error(`responses that openapi/openapi.json does not describe:\n${responses.violations.join('\n')}`)
      }
      folder?.close()
      // Usage written after the folder is gone would make it again.
      await usage?.close()
      await sources?.close()
      await tracing?.flush()
      // A suite that rendered a PDF started Chromium: stop it with the server.
      await node.services.browserSessions?.closeAll()
      await node.services.browser?.close()
      await node.close()
      // Calls whose connections were just cut may still be finishing a write (and its lock) in the folder.
      await rm(dataDir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 })
    },
  }
}
