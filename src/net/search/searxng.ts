import { ToolError } from '../../core/errors'
import type { HttpClient } from '../http'
import type { SearchProvider, SearchResult } from './search'

/** SearXNG's JSON API (`format=json` must be enabled in its settings.yml `search.formats`). */
export function createSearxngProvider(baseUrl: string, http: HttpClient): SearchProvider {
  return {
    name: 'searxng',
    async search(query, count, signal) {
      const url = `${baseUrl}/search?${new URLSearchParams({ q: query, format: 'json', safesearch: '1' })}`
      const response = await http.request({
        url,
        headers: { accept: 'application/json' },
        timeoutMs: 15_000,
        signal,
        maxBytes: 4 * 1024 * 1024,
      })
      if (response.status !== 200) {
        throw new ToolError('unavailable', `The search backend answered ${response.status}.`, {
          hint: 'Try again later; the operator may need to enable format=json in SearXNG.',
        })
      }
      return parseSearxngResults(new TextDecoder().decode(response.body), count)
    },
  }
}

export function parseSearxngResults(json: string, count: number): SearchResult[] {
  let parsed: { results?: Array<{ title?: unknown; url?: unknown; content?: unknown }> }
  try {
    parsed = JSON.parse(json)
  } catch {
    throw new ToolError('unavailable', 'The search backend did not answer with JSON.', {
      hint: 'Try again later; the operator may need to enable format=json in SearXNG.',
    })
  }
  return (parsed.results ?? [])
    .filter((result) => typeof result.url === 'string' && /^https?:\/\//.test(result.url))
    .slice(0, count)
    .map((result) => ({
      title: String(result.title ?? ''),
      url: String(result.url),
      snippet: String(result.content ?? ''),
    }))
}
