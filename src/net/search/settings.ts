import { z } from 'zod'
import { ConfigError, defineSettings, httpUrl, variable } from '../../core/settings'

export type SearchSettings =
  | { provider: 'searxng'; url: string }
  | { provider: 'brave'; apiKey: string }
  | { provider: 'duckduckgo' }
  | undefined

export const searchSettings = defineSettings({
  title: 'Web search',
  description: 'The backend of `web_search`; with none configured the tool answers 503 naming these settings.',
  variables: {
    TOOLPORT_SEARCH_PROVIDER: variable({
      schema: z.enum(['searxng', 'brave', 'duckduckgo']).optional(),
      description:
        '`searxng`, `brave` or `duckduckgo` (no key, best effort). Unset: `searxng` when its URL is set, else `brave` when its key is set, else none.',
    }),
    TOOLPORT_SEARXNG_URL: variable({
      schema: httpUrl.optional(),
      description: 'A SearXNG instance with `json` in its `search.formats`; its host is reachable for search only.',
    }),
    TOOLPORT_BRAVE_API_KEY: variable({
      schema: z.string().min(8).optional(),
      secret: true,
      description: 'A key of the Brave Search API.',
    }),
  },
  build(values): SearchSettings {
    const provider =
      values.TOOLPORT_SEARCH_PROVIDER ??
      (values.TOOLPORT_SEARXNG_URL ? 'searxng' : values.TOOLPORT_BRAVE_API_KEY ? 'brave' : undefined)
    switch (provider) {
      case 'searxng':
        if (!values.TOOLPORT_SEARXNG_URL)
          throw new ConfigError('TOOLPORT_SEARXNG_URL is required when TOOLPORT_SEARCH_PROVIDER=searxng')
        return { provider, url: values.TOOLPORT_SEARXNG_URL }
      case 'brave':
        if (!values.TOOLPORT_BRAVE_API_KEY)
          throw new ConfigError('TOOLPORT_BRAVE_API_KEY is required when TOOLPORT_SEARCH_PROVIDER=brave')
        return { provider, apiKey: values.TOOLPORT_BRAVE_API_KEY }
      case 'duckduckgo':
        return { provider }
      default:
        return undefined
    }
  },
})
