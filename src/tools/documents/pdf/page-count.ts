/**
 * The page count of a PDF found the way a PDF reader finds it, without parsing the whole file: the
 * last `startxref` → the cross-reference table → the trailer's /Root → the catalog's /Pages → its
 * /Count. Chromium (Skia) writes exactly that shape (a classic table, no object streams, no
 * incremental update), so its PDFs are counted in microseconds, where pdf-lib's full parse took 5 ms
 * for one page and 66 ms for 55 here.
 *
 * Every step is checked: the offset of an object must land on that object's header, each key is read
 * at the top level of its dictionary (strings, nested dictionaries and arrays are skipped whole, so
 * text of the document such as its title cannot pose as a key), and /Type must be /Catalog and
 * /Pages. Anything else (an xref stream, an update with /Prev, an object stream, a malformed or
 * truncated file) answers undefined, and the caller counts with a full parse.
 */
export function pageCountFromXref(bytes: Uint8Array): number | undefined {
  const tail = latin1(bytes, Math.max(0, bytes.length - 1024), bytes.length)
  const start = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail)
  if (!start) return undefined
  const xref = readXref(bytes, Number(start[1]))
  if (!xref || xref.trailer.has('/Prev') || xref.trailer.has('/XRefStm')) return undefined
  const catalog = readObject(bytes, xref, referenceOf(xref.trailer.get('/Root')))
  if (catalog?.get('/Type')?.[0] !== '/Catalog') return undefined
  const pages = readObject(bytes, xref, referenceOf(catalog.get('/Pages')))
  if (pages?.get('/Type')?.[0] !== '/Pages') return undefined
  const count = pages.get('/Count')
  return count?.length === 1 && /^\d{1,9}$/.test(count[0] as string) ? Number(count[0]) : undefined
}

/** A dictionary's top-level entries: each key with the tokens of its value (a nested value is one token). */
type Dictionary = Map<string, string[]>

interface Xref {
  /** Object number → byte offset, for objects in use. */
  offsets: Map<number, number>
  trailer: Dictionary
}

/** A single-byte decoding (as csv.ts reads windows-1252): one character per byte, so text offsets are file offsets. */
function latin1(bytes: Uint8Array, from: number, to: number): string {
  return new TextDecoder('latin1').decode(bytes.subarray(from, to))
}

/** A classic cross-reference table at `offset`: subsections of fixed 20-byte entries, then the trailer. */
function readXref(bytes: Uint8Array, offset: number): Xref | undefined {
  if (offset >= bytes.length) return undefined
  const text = latin1(bytes, offset, bytes.length)
  const header = /^xref[ \t]*\r?\n/.exec(text)
  if (!header) return undefined
  const offsets = new Map<number, number>()
  let at = header[0].length
  const subsection = /(\d+) (\d+)[ \t]*\r?\n/y
  for (;;) {
    subsection.lastIndex = at
    const found = subsection.exec(text)
    if (!found) break
    const first = Number(found[1])
    const count = Number(found[2])
    at = subsection.lastIndex
    if (at + count * 20 > text.length) return undefined
    for (let index = 0; index < count; index++, at += 20) {
      const entry = /^(\d{10}) (\d{5}) ([nf])(?: \r| \n|\r\n)$/.exec(text.slice(at, at + 20))
      if (!entry) return undefined
      if (entry[3] === 'n') offsets.set(first + index, Number(entry[1]))
    }
  }
  const trailer = /^\s*trailer\s*/.exec(text.slice(at))
  if (!trailer) return undefined
  const parsed = readDictionary(text, at + trailer[0].length)
  return parsed ? { offsets, trailer: parsed } : undefined
}

/** "12 0 R" → 12; anything else → undefined. */
function referenceOf(value: string[] | undefined): number | undefined {
  if (value?.length !== 3 || value[2] !== 'R' || !/^\d+$/.test(value[0] as string)) return undefined
  return Number(value[0])
}

/** The dictionary of object `number`, which must start where the table says it does. */
function readObject(bytes: Uint8Array, xref: Xref, number: number | undefined): Dictionary | undefined {
  const offset = number === undefined ? undefined : xref.offsets.get(number)
  if (offset === undefined || offset >= bytes.length) return undefined
  const header = new RegExp(`^${number} \\d+ obj\\s*`)
  // A catalog or page-tree node is small: the first 2 KB hold what Chromium writes, and decoding only
  // those keeps the count cheap (two 64 KB decodes were most of its cost). A dictionary they cut
  // short is read again from 64 KB, which holds any such node with room to spare.
  for (const window of [2048, 65536]) {
    const end = Math.min(bytes.length, offset + window)
    const text = latin1(bytes, offset, end)
    const found = header.exec(text)
    if (!found) return undefined
    const dictionary = readDictionary(text, found[0].length)
    if (dictionary || end === bytes.length) return dictionary
  }
  return undefined
}

const delimiters = '()<>[]{}/%'
const isSpace = (char: string | undefined) =>
  char === ' ' || char === '\n' || char === '\r' || char === '\t' || char === '\f' || char === '\0'

/** The top-level entries of the dictionary that starts at `at` ("<<"), or undefined if it is malformed. */
function readDictionary(text: string, at: number): Dictionary | undefined {
  if (!text.startsWith('<<', at)) return undefined
  const tokens: string[] = []
  let index = at + 2
  for (;;) {
    index = skipSpace(text, index)
    if (index >= text.length) return undefined
    if (text.startsWith('>>', index)) break
    const end = tokenEnd(text, index)
    if (end === undefined) return undefined
    tokens.push(text.slice(index, end))
    index = end
  }
  const entries: Dictionary = new Map()
  let key: string | undefined
  for (const token of tokens) {
    if (token.startsWith('/') && (key === undefined || (entries.get(key)?.length ?? 0) > 0)) {
      key = token
      entries.set(key, [])
    } else if (key === undefined) {
      return undefined
    } else {
      entries.get(key)?.push(token)
    }
  }
  return entries
}

function skipSpace(text: string, at: number): number {
  let index = at
  for (;;) {
    while (isSpace(text[index])) index++
    if (text[index] !== '%') return index
    while (index < text.length && text[index] !== '\n' && text[index] !== '\r') index++
  }
}

/** The end of the token at `at`: a string, dictionary or array is one token, whatever it holds. */
function tokenEnd(text: string, at: number): number | undefined {
  const char = text[at]
  if (char === '(') return literalStringEnd(text, at)
  if (text.startsWith('<<', at) || char === '[') return nestedEnd(text, at)
  if (char === '<') {
    const close = text.indexOf('>', at)
    return close === -1 ? undefined : close + 1
  }
  if (char === ')' || char === '>' || char === ']' || char === '{' || char === '}') return undefined
  let index = at + 1
  while (index < text.length && !isSpace(text[index]) && !delimiters.includes(text[index] as string)) index++
  return index
}

function literalStringEnd(text: string, at: number): number | undefined {
  let depth = 0
  for (let index = at; index < text.length; index++) {
    const char = text[index]
    if (char === '\\') index++
    else if (char === '(') depth++
    else if (char === ')' && --depth === 0) return index + 1
  }
  return undefined
}

/** The end of a dictionary or array, skipping the strings inside it (which may hold any bracket). */
function nestedEnd(text: string, at: number): number | undefined {
  let depth = 0
  let index = at
  while (index < text.length) {
    const char = text[index]
    if (char === '(') {
      const end = literalStringEnd(text, index)
      if (end === undefined) return undefined
      index = end
      continue
    }
    if (char === '%') {
      index = skipSpace(text, index)
      continue
    }
    if (text.startsWith('<<', index) || char === '[') {
      depth++
      index += char === '[' ? 1 : 2
    } else if (text.startsWith('>>', index) || char === ']') {
      depth--
      index += char === ']' ? 1 : 2
      if (depth === 0) return index
    } else if (char === '<') {
      const close = text.indexOf('>', index)
      if (close === -1) return undefined
      index = close + 1
    } else {
      index++
    }
  }
  return undefined
}
