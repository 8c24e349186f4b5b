import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { defineTool } from '../tool'
import { SearchPreview, webSearchDryRun } from './dry-runs'

export const webSearch = defineTool({
  name: 'web_search',
  title: 'Web search',
  description:
    'Search the web and return the top results as title, url and snippet. Follow up with web_fetch to read a result.',
  // A read of the public web (as in the reference systems): it changes nothing, so it is not held for
  // approval as external tools are; it still reaches outside the service.
  effect: 'read',
  uses: ['search'],
  // A search changes nothing.
  hints: { idempotent: true, openWorld: true },
  input: z.strictObject({
    query: z.string().trim().min(1).max(500).describe('What to search for.'),
    count: z.number().int().min(1).max(10).default(5).describe('Number of results, 1-10. Default: 5.'),
  }),
  output: z.object({
    query: z.string(),
    provider: z.string(),
    results: z.array(z.object({ title: z.string(), url: z.string(), snippet: z.string() })),
  }),
  callTitle: (input) => `Search: ${input.query.length > 60 ? `${input.query.slice(0, 60)}…` : input.query}`,
  dryRun: webSearchDryRun,
  preview: SearchPreview,
  async run(input, { search, signal }) {
    if (!search) {
      throw new ToolError('unavailable', 'No web search provider is configured on this server.', {
        notOffered: true,
        hint: 'The operator can set TOOLPORT_SEARXNG_URL, TOOLPORT_BRAVE_API_KEY or TOOLPORT_SEARCH_PROVIDER=duckduckgo.',
      })
    }
    const results = await search.search(input.query, input.count, signal)
    // Snippets are short by nature; bound them anyway so ten results can never crowd a response.
    return {
      query: input.query,
      provider: search.name,
      results: results.slice(0, input.count).map((result) => ({
        title: result.title.slice(0, 500),
        url: result.url.slice(0, 4096),
        snippet: result.snippet.slice(0, 2000),
      })),
    }
  },
})
