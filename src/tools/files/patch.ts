import { ToolError } from '../../core/errors'
import { lineEnding, splitLines } from './text'

export interface LinePatch {
  start_line: number
  end_line: number
  content: string
}

function invalidPatch(index: number, field: string, message: string, hint: string): ToolError {
  return new ToolError('validation', message, { hint, details: { field: `patches.${index}.${field}` } })
}

/**
 * Applies line-range patches bottom-up, so each patch's line numbers refer to the original file.
 * end_line = start_line - 1 inserts before start_line (start_line = total + 1 appends).
 * Patches that overlap or start on the same line are refused: their result would depend on order.
 */
export function applyLinePatches(text: string, patches: readonly LinePatch[]): string {
  const lines = splitLines(text)
  const total = lines.length
  const eol = lineEnding(text)
  const indexed = patches.map((patch, index) => ({ ...patch, index }))
  for (const patch of indexed) {
    if (patch.start_line > total + 1) {
      throw invalidPatch(
        patch.index,
        'start_line',
        `Patch ${patch.index} starts at line ${patch.start_line}, but the file has ${total} lines.`,
        `Use a start_line between 1 and ${total + 1} (${total + 1} appends).`,
      )
    }
    if (patch.end_line < patch.start_line - 1 || patch.end_line > total) {
      throw invalidPatch(
        patch.index,
        'end_line',
        `Patch ${patch.index} has end_line ${patch.end_line}, outside ${patch.start_line - 1}..${total}.`,
        'Use an end_line from start_line to the last line, or start_line - 1 to insert without replacing.',
      )
    }
  }
  const ascending = [...indexed].sort((a, b) => a.start_line - b.start_line || a.end_line - b.end_line)
  for (let position = 1; position < ascending.length; position++) {
    const previous = ascending[position - 1] as (typeof ascending)[number]
    const next = ascending[position] as (typeof ascending)[number]
    if (next.start_line <= previous.end_line || next.start_line === previous.start_line) {
      throw invalidPatch(
        next.index,
        'start_line',
        `Patches ${previous.index} and ${next.index} overlap.`,
        'Give each patch its own line range; merge overlapping changes into one patch.',
      )
    }
  }
  for (const patch of ascending.reverse()) {
    // Bottom-up: lines before this patch are still the original ones; lines after it may have changed.
    const last = lines.length - 1
    const fileLacksFinalEnding = last >= 0 && !(lines[last] as string).endsWith('\n')
    const rangeEndsFile = patch.end_line === lines.length
    if (patch.start_line === lines.length + 1 && fileLacksFinalEnding) lines[last] += eol
    let content =
      eol === '\r\n' && !patch.content.includes('\r\n') ? patch.content.replace(/\n/g, '\r\n') : patch.content
    // Keep lines separate: the new text ends with a line ending unless it now ends a file that had none.
    if (content !== '' && !content.endsWith('\n') && !(rangeEndsFile && fileLacksFinalEnding)) content += eol
    lines.splice(patch.start_line - 1, patch.end_line - patch.start_line + 1, ...splitLines(content))
  }
  return lines.join('')
}
