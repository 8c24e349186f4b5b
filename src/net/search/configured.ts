import type { WebConfig } from '../../config/config'
import type { HttpClient } from '../http'
import type { NetworkPolicy } from '../ssrf'
import { createBraveProvider } from './brave'
import { createDuckDuckGoProvider } from './duckduckgo'
import type { SearchProvider } from './search'
import { createSearxngProvider } from './searxng'

/**
 * The search provider the configuration names, over the runtime's HTTP client. `clientFor` builds a
 * client with another policy: the operator's own SearXNG usually lives on an address the shared
 * client refuses, so exactly that host is opened, for search only.
 */
export function createConfiguredSearch(
  web: WebConfig,
  http: HttpClient,
  clientFor: (policy: NetworkPolicy) => HttpClient,
): SearchProvider | undefined {
  const search = web.search
  switch (search?.provider) {
    case 'searxng':
      return createSearxngProvider(search.url, clientFor({ allowHosts: [...web.allowHosts, new URL(search.url).host] }))
    case 'brave':
      return createBraveProvider(search.apiKey, http)
    case 'duckduckgo':
      return createDuckDuckGoProvider(http)
    default:
      return undefined
  }
}
