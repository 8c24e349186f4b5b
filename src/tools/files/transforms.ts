import { cpuSlices } from '../../core/cpu-slices'
import { ToolError } from '../../core/errors'
import { applyLinePatches } from './patch'
import { countOccurrences, findText } from './search'
import { lineNumberAt, spliceText } from './text'

/**
 * The edits of write_file, apply_edit, revert_edit and multi_edit as pure text transformations: the
 * tools write what these return, and their dry runs diff it, so a preview is exactly what a call writes.
 */
function notFound(path: string, field: string, index?: number): ToolError {
  const which = index === undefined ? 'old_text' : `edits[${index}].old_text`
  const after = index ? ` after applying edits 0..${index - 1}` : ''
  return new ToolError('not_found', `${which} was not found in ${path}${after}; nothing was written.`, {
    hint: 'Copy old_text exactly from the current file (read_file), including whitespace and line endings.',
    details: { field },
  })
}

/** apply_edit / revert_edit as a pure text transformation (a dry run computes exactly what the call writes). */
export function replaceFirstText(text: string, path: string, edit: { old_text: string; new_text: string }) {
  const index = findText(text, edit.old_text)
  if (index === -1) throw notFound(path, 'old_text')
  return { text: spliceText(text, index, edit.old_text.length, edit.new_text), line: lineNumberAt(text, index) }
}

/**
 * multi_edit as a pure text transformation: all edits in order, or a not_found naming the first that fails.
 * Each edit is a search of the whole file (up to ~100 ms for 8 MB); the event loop gets a turn between them.
 */
export async function multiEditText(
  text: string,
  path: string,
  edits: readonly { old_text: string; new_text: string }[],
): Promise<string> {
  const slices = cpuSlices()
  let updated = text
  for (const [index, edit] of edits.entries()) {
    await slices.pause()
    const position = findText(updated, edit.old_text)
    if (position === -1) throw notFound(path, `edits.${index}.old_text`, index)
    updated = spliceText(updated, position, edit.old_text.length, edit.new_text)
  }
  return updated
}

/** The new text of a replace or patch write (pure, so a dry run computes exactly what the call would write). */
export function textAfterWrite(
  text: string,
  path: string,
  input: {
    mode: 'replace' | 'patch' | 'write'
    old_text?: string | undefined
    new_text?: string | undefined
    patches?: Parameters<typeof applyLinePatches>[1] | undefined
  },
): string {
  if (input.mode === 'replace') {
    const oldText = input.old_text as string
    const first = findText(text, oldText)
    if (first === -1) {
      throw new ToolError('not_found', `old_text was not found in ${path}.`, {
        hint: 'Copy old_text exactly from the current file (read_file), including whitespace and line endings.',
        details: { field: 'old_text' },
      })
    }
    // Unique means no second match starting anywhere after the first, overlapping ones included:
    // "aa" in "aaa" matches twice, and which one to replace would be a guess.
    if (findText(text, oldText, first + 1) !== -1) {
      const matches = Math.max(2, countOccurrences(text, oldText))
      throw new ToolError('conflict', `old_text occurs ${matches} times in ${path}; replace needs a unique match.`, {
        hint: 'Include more surrounding lines in old_text so that it matches exactly once.',
        details: { field: 'old_text', matches },
      })
    }
    return spliceText(text, first, oldText.length, input.new_text as string)
  }
  return applyLinePatches(text, input.patches ?? [])
}
