import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createChromiumBrowser } from '../browser/chromium'
import type { Config } from '../config'
import { setupShell } from '../sandbox/setup'
import { noServices, type ToolServices } from '../tools/services'
import type { Logger } from '../tools/tool'
import type { HttpClient } from '../web/http'
import { createNodeHttpClient } from '../web/node-http'
import type { SearchProvider } from '../web/search'
import { createBraveProvider } from '../web/search/brave'
import { createDuckDuckGoProvider } from '../web/search/duckduckgo'
import { createSearxngProvider } from '../web/search/searxng'
import { createNodeSystemProbe } from './node-system'

function createSearch(config: Config, http: HttpClient): SearchProvider | undefined {
  const search = config.web.search
  switch (search?.provider) {
    case 'searxng':
      // The operator's own SearXNG usually lives on a private address: open exactly that host.
      return createSearxngProvider(
        search.url,
        createNodeHttpClient({ policy: { allowHosts: [...config.web.allowHosts, new URL(search.url).host] } }),
      )
    case 'brave':
      return createBraveProvider(search.apiKey, http)
    case 'duckduckgo':
      return createDuckDuckGoProvider(http)
    default:
      return undefined
  }
}

export interface NodeServices {
  services: ToolServices
  shellProblem: string | undefined
}

/** The Node runtime's tool services; the sandbox only when execute_command is enabled. */
export async function createNodeServices(
  config: Config,
  env: Record<string, string | undefined>,
  log: Logger,
  options: { shell: boolean },
): Promise<NodeServices> {
  const http = createNodeHttpClient({ policy: { allowHosts: config.web.allowHosts } })
  const shell = options.shell ? await setupShell(config, env, log) : { shell: undefined, problem: undefined }
  const dataDir = resolve(config.dataDir)
  await mkdir(dataDir, { recursive: true })
  return {
    services: {
      ...noServices,
      shell: shell.shell,
      http,
      search: createSearch(config, http),
      system: createNodeSystemProbe(dataDir),
      environment: config.web.env,
      // Created now, launched on the first render: a service that never makes a PDF never starts Chromium.
      browser: config.browser.enabled
        ? createChromiumBrowser({ executablePath: config.browser.chromiumPath, pages: config.browser.pages, log })
        : undefined,
    },
    shellProblem: shell.problem,
  }
}
