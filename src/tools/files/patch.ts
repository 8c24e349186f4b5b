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
 * Applies line-range patches whose line numbers all refer to the original file, in one pass from the top:
 * original lines are copied up to each patch, the patch's lines go in instead of its range, so the work is
 * linear in the file and the patches, however many lines a patch brings (no spread into a call, whose
 * arguments live on the stack). end_line = start_line - 1 inserts before start_line (start_line = total + 1
 * appends). Patches that overlap or start on the same line are refused: their result would depend on order.
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
  const last = total - 1
  const fileLacksFinalEnding = last >= 0 && !(lines[last] as string).endsWith('\n')
  const patched: string[] = []
  let next = 0
  for (const [position, patch] of ascending.entries()) {
    while (next < patch.start_line - 1) patched.push(lines[next++] as string)
    // An append to a file without a final line ending first ends its last line (unless a patch replaced it).
    const tail = patched.length - 1
    if (
      patch.start_line === total + 1 &&
      fileLacksFinalEnding &&
      tail >= 0 &&
      !(patched[tail] as string).endsWith('\n')
    )
      patched[tail] += eol
    let content =
      eol === '\r\n' && !patch.content.includes('\r\n') ? patch.content.replace(/\n/g, '\r\n') : patch.content
    // Keep lines separate: the new text ends with a line ending unless it now ends a file that had none.
    const endsFile = patch.end_line === total && position === ascending.length - 1
    if (content !== '' && !content.endsWith('\n') && !(endsFile && fileLacksFinalEnding)) content += eol
    for (const line of splitLines(content)) patched.push(line)
    next = patch.end_line
  }
  while (next < total) patched.push(lines[next++] as string)
  return patched.join('')
}
