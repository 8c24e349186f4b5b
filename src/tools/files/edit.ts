import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { defineTool, type ToolContext } from '../tool'
import { writeAfterEdit } from './editing'
import { EditOutput, WorkspacePath } from './schemas'
import { decodeText, lineNumberAt, spliceText } from './text'

const OldText = z.string().min(1).describe('Exact text to find, including whitespace and line endings.')
const NewText = z.string().describe('Text that replaces it.')

const SingleEditInput = z.object({ path: WorkspacePath, old_text: OldText, new_text: NewText })
const SingleEditOutput = EditOutput.extend({
  line: z.number().int().describe('Line where the replaced text started.'),
})

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
  const index = text.indexOf(edit.old_text)
  if (index === -1) throw notFound(path, 'old_text')
  return { text: spliceText(text, index, edit.old_text.length, edit.new_text), line: lineNumberAt(text, index) }
}

/** multi_edit as a pure text transformation: all edits in order, or a not_found naming the first that fails. */
export function multiEditText(text: string, path: string, edits: readonly { old_text: string; new_text: string }[]) {
  let updated = text
  for (const [index, edit] of edits.entries()) {
    const position = updated.indexOf(edit.old_text)
    if (position === -1) throw notFound(path, `edits.${index}.old_text`, index)
    updated = spliceText(updated, position, edit.old_text.length, edit.new_text)
  }
  return updated
}

async function replaceFirst(input: z.output<typeof SingleEditInput>, { workspace, limits }: ToolContext) {
  const file = await workspace.readFile(input.path, limits.maxFileBytes)
  const edited = replaceFirstText(decodeText(file.bytes, file.path), file.path, input)
  const written = await writeAfterEdit(workspace, file, edited.text, limits.maxFileBytes)
  return { path: written.path, bytes_written: written.bytes, line: edited.line }
}

export const applyEdit = defineTool({
  name: 'apply_edit',
  title: 'Apply edit',
  description:
    'Edit a workspace file surgically: replace the first occurrence of old_text with new_text. Fails with not_found, writing nothing, when old_text is absent.',
  effect: 'write',
  callTitle: (input) => `Edit ${input.path}`,
  input: SingleEditInput,
  output: SingleEditOutput,
  run: replaceFirst,
})

export const revertEdit = defineTool({
  name: 'revert_edit',
  title: 'Revert edit',
  description:
    'Undo an earlier edit: find old_text (the text the edit produced) and put new_text (the original text) back, first occurrence only.',
  effect: 'write',
  callTitle: (input) => `Edit ${input.path}`,
  input: z.object({
    path: WorkspacePath,
    old_text: OldText.describe('The edited text now in the file.'),
    new_text: NewText.describe('The original text to restore.'),
  }),
  output: SingleEditOutput,
  run: replaceFirst,
})

export const multiEdit = defineTool({
  name: 'multi_edit',
  title: 'Multiple edits',
  description:
    'Apply several edits to one workspace file in order, each replacing the first occurrence of its old_text. All or nothing: if any edit fails, the file is left unchanged.',
  effect: 'write',
  callTitle: (input) => `Edit ${input.path}`,
  input: z.object({
    path: WorkspacePath,
    edits: z
      .array(z.object({ old_text: OldText, new_text: NewText }))
      .min(1)
      .max(200)
      .describe('Edits applied one after another; each sees the result of the previous ones.'),
  }),
  output: EditOutput.extend({ edits_applied: z.number().int() }),
  async run(input, { workspace, limits }) {
    const file = await workspace.readFile(input.path, limits.maxFileBytes)
    const text = multiEditText(decodeText(file.bytes, file.path), file.path, input.edits)
    const written = await writeAfterEdit(workspace, file, text, limits.maxFileBytes)
    return { path: written.path, bytes_written: written.bytes, edits_applied: input.edits.length }
  },
})
