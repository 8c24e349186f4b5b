import { ToolError } from '../../core/errors'
import type { HttpClient } from '../http'
import type { SearchProvider, SearchResult } from './search'

const endpoint = 'https://api.search.brave.com/res/v1/web/search'

/** Brave Search API (a subscription token from the Brave developer dashboard). */
export function createBraveProvider(apiKey: string, http: HttpClient, baseUrl = endpoint): SearchProvider {
  return {
    name: 'brave',
    async search(query, count, signal) {
      const response = await http.request({
        url: `${baseUrl}?${new URLSearchParams({ q: query, count: String(count) })}`,
        headers: { accept: 'application/json', 'x-subscription-token': apiKey },
        timeoutMs: 15_000,
        signal,
      })
      if (response.status === 429) {
        throw new ToolError('rate_limited', 'The search provider is rate limiting this service.', {
          hint: 'Wait a minute and search again.',
          headers: { 'Retry-After': '60' },
        })
      }
      if (response.status !== 200) {
        throw new ToolError('unavailable', `The search provider answered ${response.status}.`, {
          hint: 'Try again later.',
        })
      }
      return parseBraveResults(new TextDecoder().decode(response.body), count)
    },
  }
}

export function parseBraveResults(json: string, count: number): SearchResult[] {
  let parsed: { web?: { results?: Array<{ title?: unknown; url?: unknown; description?: unknown }> } }
  try {
    parsed = JSON.parse(json)
  } catch {
    throw new ToolError('unavailable', 'The search provider did not answer with JSON.', { hint: 'Try again later.' })
  }
  return (parsed.web?.results ?? [])
    .filter((result) => typeof result.url === 'string')
    .slice(0, count)
    .map((result) => ({
      title: stripTags(String(result.title ?? '')),
      url: String(result.url),
      snippet: stripTags(String(result.description ?? '')),
    }))
}

function stripTags(text: string): string {
  return text.replace(/<[^>]*>/g, '')
}
