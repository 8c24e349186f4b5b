/** A web search backend (SearXNG, Brave, a public engine's HTML page). Types only. */
export interface SearchResult {
  title: string
  url: string
  snippet: string
}

export interface SearchProvider {
  readonly name: string
  search(query: string, count: number, signal: AbortSignal): Promise<SearchResult[]>
}
