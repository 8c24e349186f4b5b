import { maxListLimit } from './store'

/**
 * Key rules shared by every driver. The workspace layer already validates user paths; drivers check
 * again because a key that slips through here could escape the fs driver's root.
 */
const maxKeyBytes = 1024
// C0 controls, DEL and C1 controls.
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/

// Segments of letters, digits, '_', '-' and '.' that start with no '.', joined by single slashes:
// no control, surrogate, backslash, leading slash, empty or dot segment can be in such a key, and its
// length is its UTF-8 length. Nearly every key is one, and is settled by this one test.
const plainKey = /^[\w-][\w.-]*(?:\/[\w-][\w.-]*)*$/

function keyProblem(key: string, allowTrailingSlash: boolean): string | undefined {
  if (typeof key !== 'string') return 'key is not a string'
  if (key.length <= maxKeyBytes && plainKey.test(allowTrailingSlash && key.endsWith('/') ? key.slice(0, -1) : key)) {
    return undefined
  }
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a pair of them 4), so a short key needs no encoding.
  if (key.length * 3 > maxKeyBytes && new TextEncoder().encode(key).byteLength > maxKeyBytes) {
    return `key is longer than ${maxKeyBytes} bytes`
  }
  if (controlCharacters.test(key)) return 'key contains a control character'
  if (/\p{Cs}/u.test(key)) return 'key contains an unpaired surrogate'
  if (key.includes('\\')) return 'key contains a backslash'
  if (key.startsWith('/')) return 'key starts with /'
  const body = allowTrailingSlash && key.endsWith('/') ? key.slice(0, -1) : key
  if (body === '') return allowTrailingSlash ? undefined : 'key is empty'
  for (const segment of body.split('/')) {
    if (segment === '') return 'key has an empty segment'
    if (segment === '.' || segment === '..') return 'key has a . or .. segment'
  }
  return undefined
}

export function assertValidKey(key: string): void {
  const problem = keyProblem(key, false)
  if (problem) throw new Error(`Invalid storage key ${JSON.stringify(key)}: ${problem}`)
}

/** A list prefix may be empty or end with '/'; otherwise it follows the key rules. */
export function assertValidPrefix(prefix: string): void {
  const problem = keyProblem(prefix, true)
  if (problem) throw new Error(`Invalid storage prefix ${JSON.stringify(prefix)}: ${problem}`)
}

/** Compares keys by UTF-8 bytes, the order S3 lists in (differs from UTF-16 order above U+FFFF). */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0
  const encoder = new TextEncoder()
  const left = encoder.encode(a)
  const right = encoder.encode(b)
  const length = Math.min(left.length, right.length)
  for (let index = 0; index < length; index++) {
    const difference = (left[index] as number) - (right[index] as number)
    if (difference !== 0) return difference
  }
  return left.length - right.length
}

/** Non-throwing form of assertValidKey, for names found on disk that may not be usable as keys. */
export function isValidKey(key: string): boolean {
  return keyProblem(key, false) === undefined
}

/** A page size within 1..maxListLimit; anything unusable means the maximum. */
export function clampListLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return maxListLimit
  return Math.min(maxListLimit, Math.max(1, Math.floor(limit)))
}

/** With a delimiter, the common prefix a key folds into (ending in '/'); otherwise the key itself. */
export function rollUpKey(key: string, prefix: string, delimiter: '/' | undefined): string {
  if (!delimiter) return key
  const index = key.indexOf(delimiter, prefix.length)
  return index === -1 ? key : key.slice(0, index + 1)
}

export interface ListPage {
  /** Object keys and common prefixes (those end in '/'; keys never do), ascending. */
  entries: string[]
  cursor?: string
}

/**
 * One ListObjectsV2-style page for drivers that see all matching entries at once. The cursor is the
 * last entry returned: everything after it in key order comes next, so a rolled-up prefix is never
 * repeated and entries added or removed between pages do not shift the rest.
 */
export function selectListPage(entries: Iterable<string>, cursor: string | undefined, limit: number): ListPage {
  const encoder = new TextEncoder()
  const after = cursor === undefined ? undefined : encoder.encode(cursor)
  const candidates: { entry: string; bytes: Uint8Array }[] = []
  for (const entry of new Set(entries)) {
    const bytes = encoder.encode(entry)
    if (after === undefined || compareBytes(bytes, after) > 0) candidates.push({ entry, bytes })
  }
  // Sorting pre-encoded keys: compareKeys would encode both keys on every comparison.
  candidates.sort((left, right) => compareBytes(left.bytes, right.bytes))
  const page = candidates.slice(0, limit).map((candidate) => candidate.entry)
  const last = page.at(-1)
  return candidates.length > limit && last !== undefined ? { entries: page, cursor: last } : { entries: page }
}

function compareBytes(left: Uint8Array, right: Uint8Array): number {
  const length = Math.min(left.length, right.length)
  for (let index = 0; index < length; index++) {
    const difference = (left[index] as number) - (right[index] as number)
    if (difference !== 0) return difference
  }
  return left.length - right.length
}
