import type { Context } from 'hono'
import { ToolError } from '../core/errors'

/**
 * The request body as text, which must be UTF-8: decoded leniently, a byte that is not (a Latin-1 é,
 * a cut-off sequence) would become U+FFFD and be stored, in a file or a path, as if it were sent.
 */
export async function readUtf8Body(context: Context): Promise<string> {
  return decodeUtf8Body(await context.req.arrayBuffer())
}

/** See readUtf8Body: the bytes of a body as UTF-8 text, or a validation error. */
export function decodeUtf8Body(bytes: ArrayBuffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new ToolError('validation', 'The request body is not valid UTF-8.', {
      hint: 'Send the JSON body encoded as UTF-8 (RFC 8259); text in another encoding must be converted first.',
    })
  }
}

// A JSON escape of half a surrogate pair: the only way a well-formed UTF-8 body can carry one.
const surrogateEscape = /\\u[dD][89a-fA-F]/
// Under the u flag a valid pair is one code point, so only a lone half is a Surrogate (Cs).
const loneSurrogate = /\p{Cs}/u

/**
 * Refuses a parsed body holding a lone surrogate (a "\ud800" escape with no pair), in a value or a
 * key: it cannot be encoded, and would reach a file as U+FFFD. Bodies without such an escape in
 * their text, nearly all, are not walked.
 */
export function assertWellFormedStrings(text: string, value: unknown): void {
  if (!surrogateEscape.test(text)) return
  const path = illFormedAt(value, [])
  if (path === undefined) return
  const field = path.join('.')
  throw new ToolError(
    'validation',
    `${field ? `${field}: ` : ''}the text holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair).`,
    {
      hint: 'Send text as valid Unicode: a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF one (an emoji is such a pair).',
      ...(field ? { details: { field } } : {}),
    },
  )
}

function illFormedAt(value: unknown, path: string[]): string[] | undefined {
  if (typeof value === 'string') return loneSurrogate.test(value) ? path : undefined
  if (value === null || typeof value !== 'object') return undefined
  for (const [key, item] of Object.entries(value)) {
    const at = [...path, key]
    if (loneSurrogate.test(key)) return at
    const found = illFormedAt(item, at)
    if (found) return found
  }
  return undefined
}
