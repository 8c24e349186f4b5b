import { ToolError } from '../../core/errors'

/** Text helpers shared by the file tools: decoding, line arithmetic and response budgets. */

const binarySniffBytes = 8000

/** A file's text for reading: bytes that are not UTF-8 read as U+FFFD. */
export function decodeText(bytes: Uint8Array, path: string): string {
  refuseBinary(bytes, path)
  // ignoreBOM keeps a byte-order mark in the text, so an edit writes it back unchanged.
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)
}

/**
 * A file's text for an edit, which writes the whole text back: it must be UTF-8 throughout, since a
 * lossy decoding would write every other byte that is not (a Latin-1 é, say) back as U+FFFD.
 */
export function decodeEditableText(bytes: Uint8Array, path: string): string {
  refuseBinary(bytes, path)
  try {
    return new TextDecoder('utf-8', { ignoreBOM: true, fatal: true }).decode(bytes)
  } catch {
    throw new ToolError('validation', `${path} is not UTF-8 text: an edit would replace its other bytes.`, {
      hint: 'Convert the file to UTF-8 first (execute_command with iconv), or write it anew with write_file.',
      details: { field: 'path' },
    })
  }
}

function refuseBinary(bytes: Uint8Array, path: string): void {
  if (!bytes.subarray(0, binarySniffBytes).includes(0)) return
  throw new ToolError('validation', `${path} is a binary file, not text.`, {
    hint: 'read_file and the edit tools work on text files only; choose a text file.',
    details: { field: 'path' },
  })
}

export function encodeText(text: string): Uint8Array {
  return new TextEncoder().encode(text)
}

/** Splits text into lines that keep their terminators; '' has no lines, 'a\nb' and 'a\nb\n' have two. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? []
}

/** How many lines splitLines would answer, without making them. */
export function countLines(text: string): number {
  const count = lineBreaks(text)
  return text.length > 0 && !text.endsWith('\n') ? count + 1 : count
}

/** The number of line breaks in text, counted up to `limit` + 1 at most. */
export function lineBreaks(text: string, limit = Number.POSITIVE_INFINITY): number {
  let count = 0
  for (let index = text.indexOf('\n'); index !== -1 && count <= limit; index = text.indexOf('\n', index + 1)) count++
  return count
}

export function lineEnding(text: string): '\r\n' | '\n' {
  return text.includes('\r\n') ? '\r\n' : '\n'
}

/** Length of a string once escaped inside a JSON document, without the quotes. */
export function jsonLength(value: string): number {
  return JSON.stringify(value).length - 2
}

/** Whether `text` escaped inside a JSON document (without the quotes) is at most `budget` long. */
export function fitsJsonBudget(text: string, budget: number): boolean {
  // A code unit is at most 6 characters escaped (\u001f), so a short enough text fits unmeasured.
  return text.length * 6 <= budget || jsonLength(text) <= budget
}

/** Longest prefix of `text` whose JSON form fits `budget`, never splitting a surrogate pair. */
export function cutToJsonBudget(text: string, budget: number): string {
  if (fitsJsonBudget(text, budget)) return text
  let low = 0
  let high = Math.min(text.length, budget)
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (jsonLength(text.slice(0, middle)) <= budget) low = middle
    else high = middle - 1
  }
  const last = text.charCodeAt(low - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? low - 1 : low)
}

/** Replaces the first occurrence at `index` without String.replace, whose '$' patterns would mangle text. */
export function spliceText(text: string, index: number, removedLength: number, inserted: string): string {
  return text.slice(0, index) + inserted + text.slice(index + removedLength)
}

export function lineNumberAt(text: string, index: number): number {
  let line = 1
  for (
    let position = text.indexOf('\n');
    position !== -1 && position < index;
    position = text.indexOf('\n', position + 1)
  ) {
    line++
  }
  return line
}
