import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createChromiumBrowser } from '../browser/chromium'
import { createBrowserSessions } from '../browser/session/manager'
import type { SessionRegistry } from '../browser/session/registry'
import type { Config } from '../config/config'
import type { Logger } from '../core/logger'
import { createNodeHttpClient, type Resolver } from '../net/node-http'
import { createConfiguredSearch } from '../net/search/configured'
import type { PolicyWorkerOptions } from '../sandbox/policy/command-lister'
import { setupShell } from '../sandbox/setup'
import { noServices, type ToolServices } from '../tools/services'
import { createNodeSystemProbe } from './node-system'
import { createOffloadPool, type OffloadWorkerOptions } from './offload-pool'

export interface NodeServices {
  services: ToolServices
  shellProblem: string | undefined
  /** Stops what the services started (the offload workers). */
  close(): Promise<void>
}

/**
 * The Node runtime's tool services; the sandbox only when execute_command is enabled, and worker threads
 * for CPU-heavy tool work when given the worker's entry (a server; on Lambda each call has its
 * execution environment to itself, so that work runs in process).
 */
export async function createNodeServices(
  config: Config,
  env: Record<string, string | undefined>,
  log: Logger,
  options: {
    shell: boolean
    policyWorker?: PolicyWorkerOptions
    offloadWorker?: OffloadWorkerOptions
    egressResolve?: Resolver
    /** A fleet engine's browser session registry (sessions counted and found across instances). */
    sessionRegistry?: SessionRegistry
  },
): Promise<NodeServices> {
  const http = createNodeHttpClient({ policy: { allowHosts: config.net.allowHosts } })
  const shell = options.shell
    ? await setupShell(config.sandbox, env, log, {
        maxFileBytes: config.calls.maxFileBytes,
        ...(options.policyWorker ? { policyWorker: options.policyWorker } : {}),
        egress: {
          settings: config.egress,
          trustedHosts: config.net.allowHosts,
          ...(options.egressResolve ? { resolve: options.egressResolve } : {}),
        },
      })
    : { shell: undefined, problem: undefined }
  // Created now, launched on the first render: a service that never makes a PDF never starts Chromium.
  const browser = config.browser.enabled
    ? createChromiumBrowser({
        executablePath: config.browser.chromiumPath,
        pages: config.browser.pages,
        log,
        egress: http.resolve,
        zygote: config.runtime !== 'lambda',
      })
    : undefined
  const browserSessions = browser
    ? createBrowserSessions({
        host: () => browser.sessionHost(),
        settings: config.browserSessions,
        maxDownloadBytes: config.calls.maxFileBytes,
        log,
        registry: options.sessionRegistry,
      })
    : undefined
  const offload = options.offloadWorker ? createOffloadPool(options.offloadWorker) : undefined
  const dataDir = resolve(config.storage.dataDir)
  await mkdir(dataDir, { recursive: true })
  return {
    services: {
      ...noServices,
      shell: shell.shell,
      http,
      search: createConfiguredSearch(config.search, config.net.allowHosts, http, (policy) =>
        createNodeHttpClient({ policy }),
      ),
      system: createNodeSystemProbe(dataDir),
      environment: config.environment.variables,
      browser,
      browserSessions,
      offload,
    },
    shellProblem: shell.problem,
    close: async () => {
      await offload?.close()
      await shell.shell?.close()
    },
  }
}
