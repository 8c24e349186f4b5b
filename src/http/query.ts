import { closestName } from '../core/closest-name'
import { ToolError } from '../core/errors'
import { echoed, echoedNameChars } from './problem'

/**
 * Refuses a query parameter the route does not take, or one given more than once. Dropped silently, a
 * mistyped flag (?dryrun=true) would run the call for real and a mistyped ?workspaces= would write
 * into the default workspace; of two values only the first would count. `url` is the request's.
 */
export function assertKnownQuery(url: string, known: readonly string[]): void {
  const start = url.indexOf('?')
  if (start === -1) return
  const end = url.indexOf('#', start)
  const seen = new Set<string>()
  for (const name of new URLSearchParams(url.slice(start + 1, end === -1 ? undefined : end)).keys()) {
    // Cut as every problem cuts what it names: a problem never echoes a megabyte.
    const shown = JSON.stringify(echoed(name))
    if (!known.includes(name)) {
      const guess = closestName(name, known)
      const takes = known.length === 0 ? 'This route takes no query parameter.' : `It takes: ${known.join(', ')}.`
      throw new ToolError('validation', `Unknown query parameter ${shown}.`, {
        hint: guess ? `Did you mean ${guess}? ${takes}` : `Remove it. ${takes}`,
        details: { field: name.slice(0, echoedNameChars), ...(guess ? { did_you_mean: guess } : {}) },
      })
    }
    if (seen.has(name)) {
      throw new ToolError('validation', `The query parameter ${shown} is given more than once.`, {
        hint: `Give ${name} once.`,
        details: { field: name },
      })
    }
    seen.add(name)
  }
}
