import { ToolError } from '../../core/errors'
import type { Workspace } from '../../workspace/workspace'
import { cutToJsonBudget, jsonLength } from './text'

// A line range of a file larger than TOOLPORT_MAX_FILE_BYTES: streamed, so only the lines asked for
// are kept (the limit then applies to what is returned, the response budget), and the rest of the
// file is only counted.

const binarySniffBytes = 8000
const newline = 0x0a

export interface StreamedRange {
  path: string
  /** The lines start..end that fit the budget, with their line endings. */
  lines: string[]
  totalLines: number
  /** Set when the first line alone was longer than the budget and was cut. */
  cutLine: boolean
}

export async function readLineRangeStreamed(
  workspace: Workspace,
  path: string,
  range: { start: number; end: number | undefined },
  budget: number,
  /** Bytes (UTF-8) of whole lines kept at most: TOOLPORT_MAX_FILE_BYTES. */
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<StreamedRange> {
  const object = await workspace.storage.getStream(workspace.keyOf(path))
  if (!object) throw new ToolError('not_found', `File not found: ${path}`, { hint: 'Check the path with list_files.' })
  const reader = object.body.getReader()
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  const lines: string[] = []
  let lineNumber = 1
  let partial = ''
  let collecting = true
  let used = 0
  let bytes = 0
  let cutLine = false
  let sniffed = 0
  let lastByte = -1
  const keep = (line: string) => {
    if (!collecting) return
    if (range.end !== undefined && lineNumber > range.end) {
      collecting = false
      return
    }
    const size = jsonLength(line)
    const lineBytes = utf8Length(line)
    if (used + size > budget || bytes + lineBytes > maxBytes) {
      if (lines.length === 0) {
        // A first line longer than either bound is cut: to the budget, and to maxBytes counted as
        // characters of up to 4 bytes each where the bytes are the tighter bound.
        const chars = bytes + lineBytes > maxBytes ? Math.min(budget, Math.floor(maxBytes / 4)) : budget
        lines.push(cutToJsonBudget(line, chars))
        cutLine = true
      }
      collecting = false
      return
    }
    lines.push(line)
    used += size
    bytes += lineBytes
  }
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (sniffed < binarySniffBytes) {
        if (value.subarray(0, binarySniffBytes - sniffed).includes(0)) {
          throw new ToolError('validation', `${path} is a binary file, not text.`, {
            hint: 'read_file works on text files only; choose a text file.',
            details: { field: 'path' },
          })
        }
        sniffed += value.byteLength
      }
      if (value.byteLength > 0) lastByte = value[value.byteLength - 1] as number
      // Before the range: count line breaks in the bytes, decoding nothing.
      let offset = 0
      while (lineNumber < range.start && offset < value.byteLength) {
        const index = value.indexOf(newline, offset)
        if (index === -1) offset = value.byteLength
        else {
          lineNumber++
          offset = index + 1
        }
      }
      if (lineNumber < range.start) continue
      if (!collecting) {
        // Past the range: only count the lines that remain.
        for (let index = value.indexOf(newline, offset); index !== -1; index = value.indexOf(newline, index + 1)) {
          lineNumber++
        }
        continue
      }
      // A line starts right after a line break, never inside a character, so decoding can start here.
      partial += decoder.decode(offset === 0 ? value : value.subarray(offset), { stream: true })
      let index = partial.indexOf('\n')
      while (index !== -1) {
        keep(partial.slice(0, index + 1))
        partial = partial.slice(index + 1)
        lineNumber++
        index = collecting ? partial.indexOf('\n') : -1
      }
      if (!collecting) {
        // What was decoded but not yet split holds further line breaks to count.
        for (let at = partial.indexOf('\n'); at !== -1; at = partial.indexOf('\n', at + 1)) lineNumber++
        partial = ''
      } else if (jsonLength(partial) > budget * 2) {
        // One endless line: keep what fits of it rather than the whole line in memory.
        keep(partial)
        partial = ''
      }
    }
    partial += decoder.decode()
    if (collecting && partial !== '') keep(partial)
  } finally {
    reader.releaseLock()
    await object.body.cancel().catch(() => {})
  }
  // A last line without a line break still counts; a file ending in one has no empty line after it.
  const totalLines = lastByte === -1 ? 0 : lastByte === newline ? lineNumber - 1 : lineNumber
  return { path, lines, totalLines, cutLine }
}

/** Bytes of a string in UTF-8, without encoding it. */
function utf8Length(text: string): number {
  let length = 0
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x80) length += 1
    else if (code < 0x800) length += 2
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      length += 4
      index++
    } else length += 3
  }
  return length
}
