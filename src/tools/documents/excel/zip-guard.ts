import { Inflate } from 'fflate'
import { ToolError } from '../../../core/errors'

/**
 * Checks an .xlsx (a zip) before any parser sees it, so zip bombs and malformed archives become a
 * 400 instead of a crash or an exhausted process:
 * - the central directory must be well formed, non-zip64, with at most `maxEntries` entries;
 * - declared uncompressed sizes are capped per entry and in total, before anything is inflated;
 * - each entry's local header must sit where the directory says, and entries may not overlap
 *   (overlapping entries are how non-recursive zip bombs multiply one compressed block);
 * - every entry is then inflated once, counting bytes and discarding them, and refused as soon as
 *   it yields more than it declared (a bomb that lies about its size).
 * While inflating, worksheet XML is scanned for <dimension> and <mergeCell>, which exceljs's
 * streaming reader skips, and workbook.xml plus its relationships give each sheet file its name.
 */
export interface ZipLimits {
  maxEntries: number
  maxEntryBytes: number
  maxTotalBytes: number
}

export const defaultZipLimits: ZipLimits = {
  maxEntries: 10_000,
  maxEntryBytes: 256 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
}

export interface SheetFacts {
  /** Sheet names by worksheet part, e.g. "xl/worksheets/sheet1.xml" → "Data". */
  names: Map<string, string>
  dimensions: Map<string, string>
  merges: Map<string, { count: number; refs: string[] }>
  totalUncompressed: number
}

interface Entry {
  name: string
  method: number
  flags: number
  compressedSize: number
  size: number
  offset: number
}

const invalid = (reason: string) =>
  new ToolError('validation', `The file is not a usable .xlsx workbook: ${reason}.`, {
    hint: 'Send an .xlsx saved by a spreadsheet program, or a .csv file.',
    details: { field: 'path' },
  })

function readEntries(bytes: Uint8Array, limits: ZipLimits): Entry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let end = -1
  for (let position = bytes.byteLength - 22; position >= Math.max(0, bytes.byteLength - 65_557); position--) {
    if (view.getUint32(position, true) === 0x06054b50) {
      end = position
      break
    }
  }
  if (end < 0) throw invalid('no zip directory was found')
  const count = view.getUint16(end + 10, true)
  const directorySize = view.getUint32(end + 12, true)
  const directoryOffset = view.getUint32(end + 16, true)
  if (count === 0xffff || directoryOffset === 0xffffffff) throw invalid('zip64 archives are not accepted')
  if (count > limits.maxEntries) throw invalid(`it has ${count} entries, more than ${limits.maxEntries}`)
  if (directoryOffset + directorySize > end) throw invalid('the zip directory is out of bounds')
  const entries: Entry[] = []
  let position = directoryOffset
  for (let index = 0; index < count; index++) {
    if (position + 46 > end || view.getUint32(position, true) !== 0x02014b50)
      throw invalid('the zip directory is corrupt')
    const nameLength = view.getUint16(position + 28, true)
    const entry: Entry = {
      flags: view.getUint16(position + 8, true),
      method: view.getUint16(position + 10, true),
      compressedSize: view.getUint32(position + 20, true),
      size: view.getUint32(position + 24, true),
      offset: view.getUint32(position + 42, true),
      name: new TextDecoder().decode(bytes.subarray(position + 46, position + 46 + nameLength)),
    }
    if (entry.size === 0xffffffff || entry.compressedSize === 0xffffffff || entry.offset === 0xffffffff)
      throw invalid('zip64 entries are not accepted')
    if (entry.method !== 0 && entry.method !== 8)
      throw invalid(`entry ${entry.name} uses compression method ${entry.method}`)
    if (entry.flags & 1) throw invalid('encrypted entries are not supported')
    entries.push(entry)
    position += 46 + nameLength + view.getUint16(position + 30, true) + view.getUint16(position + 32, true)
  }
  checkLayout(view, entries, directoryOffset)
  return entries
}

function checkLayout(view: DataView, entries: Entry[], directoryOffset: number): void {
  const ordered = [...entries].sort((a, b) => a.offset - b.offset)
  let previousEnd = 0
  for (const entry of ordered) {
    if (entry.offset < previousEnd || entry.offset + 30 > directoryOffset) throw invalid('zip entries overlap')
    if (view.getUint32(entry.offset, true) !== 0x04034b50) throw invalid('a zip entry header is missing')
    const nameLength = view.getUint16(entry.offset + 26, true)
    const extraLength = view.getUint16(entry.offset + 28, true)
    const name = new TextDecoder().decode(new Uint8Array(view.buffer, view.byteOffset + entry.offset + 30, nameLength))
    if (name !== entry.name) throw invalid('a zip entry header disagrees with the directory')
    const dataStart = entry.offset + 30 + nameLength + extraLength
    previousEnd = dataStart + entry.compressedSize + (entry.flags & 8 ? 12 : 0)
    if (previousEnd > directoryOffset + (entry.flags & 8 ? 4 : 0)) throw invalid('a zip entry runs past the directory')
    ;(entry as Entry & { dataStart: number }).dataStart = dataStart
  }
}

/** Inflates one entry, discarding the output, and fails once it yields more than it declared. */
function inflateCounting(
  bytes: Uint8Array,
  entry: Entry & { dataStart?: number },
  onText?: (text: string) => void,
): void {
  const data = bytes.subarray(entry.dataStart, (entry.dataStart ?? 0) + entry.compressedSize)
  let produced = 0
  const decoder = onText ? new TextDecoder() : undefined
  const take = (chunk: Uint8Array) => {
    produced += chunk.byteLength
    if (produced > entry.size)
      throw invalid(`entry ${entry.name} inflates to more than the ${entry.size} bytes it declares`)
    if (decoder && onText) onText(decoder.decode(chunk, { stream: true }))
  }
  if (entry.method === 0) take(data)
  else {
    const inflater = new Inflate(take)
    const step = 64 * 1024
    try {
      for (let start = 0; start < data.byteLength; start += step)
        inflater.push(data.subarray(start, start + step), start + step >= data.byteLength)
    } catch (error) {
      if (error instanceof ToolError) throw error
      throw invalid(`entry ${entry.name} is not valid deflate data`)
    }
  }
  if (produced !== entry.size) throw invalid(`entry ${entry.name} is shorter than it declares`)
}

/** Calls `onMatch` for every match of `pattern` in a text that arrives in chunks. */
function scanner(pattern: RegExp, onMatch: (match: RegExpExecArray) => void): (text: string) => void {
  let carry = ''
  return (text) => {
    const combined = carry + text
    let last = 0
    for (const match of combined.matchAll(pattern)) {
      onMatch(match as RegExpExecArray)
      last = (match.index ?? 0) + match[0].length
    }
    // Keep a tail long enough for a tag split across chunks, but never re-match what was found.
    carry = combined.slice(Math.max(last, combined.length - 300))
  }
}

export function inspectXlsx(bytes: Uint8Array, limits: ZipLimits = defaultZipLimits): SheetFacts {
  const entries = readEntries(bytes, limits)
  let total = 0
  for (const entry of entries) {
    if (entry.size > limits.maxEntryBytes)
      throw invalid(`entry ${entry.name} declares ${entry.size} bytes, more than ${limits.maxEntryBytes}`)
    total += entry.size
    if (total > limits.maxTotalBytes) throw invalid(`it declares more than ${limits.maxTotalBytes} bytes uncompressed`)
  }
  if (!entries.some((entry) => entry.name === 'xl/workbook.xml')) throw invalid('it has no xl/workbook.xml')
  const facts: SheetFacts = { names: new Map(), dimensions: new Map(), merges: new Map(), totalUncompressed: total }
  const sheetIds = new Map<string, string>()
  const targets = new Map<string, string>()
  for (const entry of entries) {
    let onText: ((text: string) => void) | undefined
    if (entry.name === 'xl/workbook.xml') {
      onText = scanner(/<sheet\b[^>]*?\bname="([^"]*)"[^>]*?\br:id="([^"]*)"/g, (m) =>
        sheetIds.set(m[2] as string, m[1] as string),
      )
    } else if (entry.name === 'xl/_rels/workbook.xml.rels') {
      onText = scanner(/<Relationship\b[^>]*?\bId="([^"]*)"[^>]*?\bTarget="([^"]*)"/g, (m) =>
        targets.set(m[1] as string, m[2] as string),
      )
    } else if (/^xl\/worksheets\/[^/]+\.xml$/.test(entry.name)) {
      const merges = { count: 0, refs: [] as string[] }
      facts.merges.set(entry.name, merges)
      onText = scanner(/<(dimension|mergeCell)\b[^>]*?\bref="([^"]*)"/g, (m) => {
        if (m[1] === 'dimension') facts.dimensions.set(entry.name, m[2] as string)
        else if (merges.count++ < 100) merges.refs.push(m[2] as string)
      })
    }
    inflateCounting(bytes, entry, onText)
  }
  for (const [id, name] of sheetIds) {
    const target = targets.get(id)
    if (target) facts.names.set(target.startsWith('/') ? target.slice(1) : `xl/${target}`, name)
  }
  return facts
}
