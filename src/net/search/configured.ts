import type { HttpClient } from '../http'
import type { NetworkPolicy } from '../outbound-guard'
import { createBraveProvider } from './brave'
import { createDuckDuckGoProvider } from './duckduckgo'
import type { SearchProvider } from './search'
import { createSearxngProvider } from './searxng'
import type { SearchSettings } from './settings'

/**
 * The search provider the configuration names, over the runtime's HTTP client. `clientFor` builds a
 * client with another policy: the operator's own SearXNG usually lives on an address the shared
 * client refuses, so exactly that host is opened, for search only.
 */
export function createConfiguredSearch(
  search: SearchSettings,
  allowHosts: readonly string[],
  http: HttpClient,
  clientFor: (policy: NetworkPolicy) => HttpClient,
): SearchProvider | undefined {
  switch (search?.provider) {
    case 'searxng':
      return createSearxngProvider(search.url, clientFor({ allowHosts: [...allowHosts, new URL(search.url).host] }))
    case 'brave':
      return createBraveProvider(search.apiKey, http)
    case 'duckduckgo':
      return createDuckDuckGoProvider(http)
    default:
      return undefined
  }
}
