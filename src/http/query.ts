import { closestName } from '../core/closest-name'
import { ToolError } from '../core/errors'
import { echoed, echoedNameChars } from '../core/validation'

/**
 * Refuses a query parameter the route does not take, or one given more than once. Dropped silently, a
 * mistyped flag (?dryrun=true) would run the call for real and a mistyped ?workspaces= would write
 * into the default workspace; of two values only the first would count. `url` is the request's.
 */
export function assertKnownQuery(url: string, known: readonly string[]): void {
  knownQuery(url, known)
}

/**
 * assertKnownQuery's checks, answering the parameters as a record: a route that reads its query
 * takes it from here, parsed once, instead of parsing the URL again.
 */
export function knownQuery(url: string, known: readonly string[]): Record<string, string> {
  const query: Record<string, string> = {}
  const hash = url.indexOf('#')
  const end = hash === -1 ? url.length : hash
  const start = url.indexOf('?')
  if (start === -1 || start > end) return query
  for (const [name, value] of queryPairs(url.slice(start + 1, end))) {
    if (!known.includes(name)) throw unknownParameter(name, known)
    if (Object.hasOwn(query, name)) {
      throw new ToolError('validation', `The query parameter ${shown(name)} is given more than once.`, {
        hint: `Give ${name} once.`,
        details: { field: name },
      })
    }
    query[name] = value
  }
  return query
}

// Cut as every problem cuts what it names: a problem never echoes a megabyte.
const shown = (name: string) => JSON.stringify(echoed(name))

function unknownParameter(name: string, known: readonly string[]): ToolError {
  const guess = closestName(name, known)
  const takes = known.length === 0 ? 'This route takes no query parameter.' : `It takes: ${known.join(', ')}.`
  return new ToolError('validation', `Unknown query parameter ${shown(name)}.`, {
    hint: guess ? `Did you mean ${guess}? ${takes}` : `Remove it. ${takes}`,
    details: { field: name.slice(0, echoedNameChars), ...(guess ? { did_you_mean: guess } : {}) },
  })
}

const escaped = /[%+]/

/**
 * The name-value pairs of a query string as URLSearchParams reads them. A query with no '%' or '+'
 * (nearly every call's ?workspace=…) holds nothing to decode, so it is split as it is: on the
 * request path URLSearchParams cost more than the schema that checks its values (with Hono parsing the
 * query again, 15% of read_file's CPU per call in paired ablation runs, 2026-12-03; docs/benchmarks.md).
 * Tests: query.test.ts holds it to URLSearchParams on escaped, repeated and odd queries.
 */
function queryPairs(search: string): Iterable<[string, string]> {
  if (escaped.test(search)) return new URLSearchParams(search)
  const pairs: [string, string][] = []
  for (const part of search.split('&')) {
    if (part === '') continue
    const equals = part.indexOf('=')
    pairs.push(equals === -1 ? [part, ''] : [part.slice(0, equals), part.slice(equals + 1)])
  }
  return pairs
}
