import { z } from 'zod'
import { defineTool, type ToolContext } from '../tool'
import { DiffPreview, diffChangesNothing, multiEditDryRun, replaceFirstDryRun } from './dry-run'
import { editText } from './editing'
import { EditOutput, WorkspacePath } from './schemas'
import { multiEditText, replaceFirstText } from './transforms'

const OldText = z.string().min(1).describe('Exact text to find, including whitespace and line endings.')
const NewText = z.string().describe('Text that replaces it.')

const SingleEditInput = z.strictObject({ path: WorkspacePath, old_text: OldText, new_text: NewText })
const SingleEditOutput = EditOutput.extend({
  line: z.number().int().describe('Line where the replaced text started.'),
})

async function replaceFirst(input: z.output<typeof SingleEditInput>, { workspace, limits }: ToolContext) {
  const written = await editText(workspace, input.path, limits.maxFileBytes, (text, path) => {
    const edited = replaceFirstText(text, path, input)
    return { text: edited.text, result: edited.line }
  })
  return { path: written.path, bytes_written: written.bytes, line: written.result }
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
  dryRun: replaceFirstDryRun,
  preview: DiffPreview,
  changesNothing: diffChangesNothing,
})

export const revertEdit = defineTool({
  name: 'revert_edit',
  title: 'Revert edit',
  description:
    'Undo an earlier edit: find old_text (the text the edit produced) and put new_text (the original text) back, first occurrence only.',
  effect: 'write',
  callTitle: (input) => `Edit ${input.path}`,
  input: z.strictObject({
    path: WorkspacePath,
    old_text: OldText.describe('The edited text now in the file.'),
    new_text: NewText.describe('The original text to restore.'),
  }),
  output: SingleEditOutput,
  run: replaceFirst,
  dryRun: replaceFirstDryRun,
  preview: DiffPreview,
  changesNothing: diffChangesNothing,
})

export const multiEdit = defineTool({
  name: 'multi_edit',
  title: 'Multiple edits',
  description:
    'Apply several edits to one workspace file in order, each replacing the first occurrence of its old_text. All or nothing: if any edit fails, the file is left unchanged.',
  effect: 'write',
  callTitle: (input) => `Edit ${input.path}`,
  input: z.strictObject({
    path: WorkspacePath,
    edits: z
      .array(z.strictObject({ old_text: OldText, new_text: NewText }))
      .min(1)
      .max(200)
      .describe('Edits applied one after another; each sees the result of the previous ones.'),
  }),
  output: EditOutput.extend({ edits_applied: z.number().int() }),
  async run(input, { workspace, limits }) {
    // All or nothing: the whole list is applied to one version and written with one conditional put.
    const written = await editText(workspace, input.path, limits.maxFileBytes, async (text, path) => ({
      text: await multiEditText(text, path, input.edits),
      result: undefined,
    }))
    return { path: written.path, bytes_written: written.bytes, edits_applied: input.edits.length }
  },
  dryRun: multiEditDryRun,
  preview: DiffPreview,
  changesNothing: diffChangesNothing,
})
