import { ToolError } from '../../core/errors'
import type { HttpClient } from '../http'
import type { SearchProvider, SearchResult } from './search'

const endpoint = 'https://html.duckduckgo.com/html/'

/**
 * Scrapes DuckDuckGo's HTML results page, which is served without JavaScript, so no browser is
 * needed. No key, but no guarantee either: the markup can change and the engine may throttle.
 */
export function createDuckDuckGoProvider(http: HttpClient, baseUrl = endpoint): SearchProvider {
  return {
    name: 'duckduckgo',
    async search(query, count, signal) {
      const response = await http.request({
        url: `${baseUrl}?${new URLSearchParams({ q: query })}`,
        headers: { accept: 'text/html', 'accept-language': 'en-US,en;q=0.8' },
        timeoutMs: 15_000,
        signal,
        maxBytes: 2 * 1024 * 1024,
      })
      if (response.status !== 200) {
        throw new ToolError('unavailable', `The search engine answered ${response.status}.`, {
          hint: 'Try again later.',
        })
      }
      return parseDuckDuckGoResults(new TextDecoder().decode(response.body), count)
    },
  }
}

/** Result links go through a redirector (/l/?uddg=<target>); the target is what the caller wants. */
function targetOf(href: string): string | undefined {
  try {
    const url = new URL(href, 'https://duckduckgo.com')
    const target = url.pathname === '/l/' ? url.searchParams.get('uddg') : url.href
    return target && /^https?:\/\//.test(target) ? target : undefined
  } catch {
    return undefined
  }
}

export async function parseDuckDuckGoResults(html: string, count: number): Promise<SearchResult[]> {
  // Loaded on the first search, not at start: linkedom is a large share of a cold start's code.
  const { parseHTML } = await import('linkedom')
  const { document } = parseHTML(html)
  const results: SearchResult[] = []
  for (const block of document.querySelectorAll('.result')) {
    if (block.classList.contains('result--ad')) continue
    const link = block.querySelector('a.result__a')
    const url = link ? targetOf(link.getAttribute('href') ?? '') : undefined
    if (!link || !url) continue
    results.push({
      title: (link.textContent ?? '').trim(),
      url,
      snippet: (block.querySelector('.result__snippet')?.textContent ?? '').trim().replace(/\s+/g, ' '),
    })
    if (results.length >= count) break
  }
  return results
}
