import type { Context } from 'hono'
import { ToolError } from '../core/errors'
import { echoed } from '../core/validation'

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
 * Refuses a parsed body that cannot be taken as it was sent: a string or key holding a lone surrogate
 * (a "\ud800" escape with no pair), which cannot be encoded and would reach a file as U+FFFD, or a
 * "__proto__" key, which schemas and records drop without a word (JSON.parse makes it an own
 * property, but no object built from it keeps it). Bodies whose text holds neither, nearly all, are
 * not walked.
 */
export function assertCleanJson(text: string, value: unknown): void {
  const surrogates = surrogateEscape.test(text)
  const proto = text.includes('__proto__')
  if (!surrogates && !proto) return
  const found = flawAt(value, [], surrogates, proto)
  if (!found) return
  // Cut as every problem cuts what it names: a megabyte-long key is not echoed back.
  const field = echoed(found.path.join('.'))
  const message =
    found.flaw === 'proto'
      ? 'the key "__proto__" is not accepted.'
      : 'the text holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair).'
  throw new ToolError('validation', `${field ? `${field}: ` : ''}${message}`, {
    hint:
      found.flaw === 'proto'
        ? 'Remove the "__proto__" key: it is never a field of any tool.'
        : 'Send text as valid Unicode: a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF one (an emoji is such a pair).',
    ...(field ? { details: { field } } : {}),
  })
}

function flawAt(
  value: unknown,
  path: string[],
  surrogates: boolean,
  proto: boolean,
): { path: string[]; flaw: 'surrogate' | 'proto' } | undefined {
  if (typeof value === 'string')
    return surrogates && loneSurrogate.test(value) ? { path, flaw: 'surrogate' } : undefined
  if (value === null || typeof value !== 'object') return undefined
  for (const key of Object.keys(value)) {
    const at = [...path, key]
    if (proto && key === '__proto__') return { path: at, flaw: 'proto' }
    if (surrogates && loneSurrogate.test(key)) return { path: at, flaw: 'surrogate' }
    const found = flawAt((value as Record<string, unknown>)[key], at, surrogates, proto)
    if (found) return found
  }
  return undefined
}
