import { z } from 'zod'
import { defineTool } from '../tool'
import { DiffPreview, diffChangesNothing, writeFileDryRun } from './dry-run'
import { editText } from './editing'
import { EditOutput, LineNumber, WorkspacePath } from './schemas'
import { encodeText } from './text'
import { textAfterWrite } from './transforms'

const Patch = z.strictObject({
  start_line: LineNumber.describe('First line to replace (1-based).'),
  end_line: z
    .number()
    .int()
    .min(0)
    .describe('Last line to replace (inclusive); start_line - 1 inserts before start_line.'),
  content: z.string().describe('Replacement text for those lines; "" deletes them.'),
})

const requiredByMode = { write: ['content'], replace: ['old_text', 'new_text'], patch: ['patches'] } as const

export const writeFile = defineTool({
  name: 'write_file',
  title: 'Write file',
  description:
    'Write a workspace file. mode "write" (default) creates or overwrites it with content; "replace" swaps the one unique match of old_text for new_text; "patch" applies line-range patches. Parent folders are implied.',
  effect: 'write',
  callTitle: (input) => `Write ${input.path}`,
  input: z
    .strictObject({
      path: WorkspacePath,
      mode: z.enum(['write', 'replace', 'patch']).default('write').describe('write | replace | patch. Default: write.'),
      content: z.string().optional().describe('mode write: the whole new content of the file.'),
      old_text: z.string().min(1).optional().describe('mode replace: text that occurs exactly once in the file.'),
      new_text: z.string().optional().describe('mode replace: the text that replaces old_text.'),
      patches: z.array(Patch).min(1).max(1000).optional().describe('mode patch: line-range edits, applied bottom-up.'),
    })
    .superRefine((input, context) => {
      for (const field of requiredByMode[input.mode]) {
        if (input[field] === undefined) {
          context.addIssue({
            code: 'custom',
            path: [field],
            message: `${field} is required when mode is "${input.mode}"`,
          })
        }
      }
      // A field of another mode is refused, not ignored: content sent with old_text (a replace meant,
      // mode forgotten) would otherwise overwrite the whole file with the content.
      for (const [mode, fields] of Object.entries(requiredByMode)) {
        if (mode === input.mode) continue
        for (const field of fields) {
          if (input[field] === undefined || (requiredByMode[input.mode] as readonly string[]).includes(field)) continue
          context.addIssue({
            code: 'custom',
            path: [field],
            message: `${field} belongs to mode "${mode}", and mode is "${input.mode}"; send mode "${mode}" or leave ${field} out`,
          })
        }
      }
    }),
  output: EditOutput.extend({
    mode: z.enum(['write', 'replace', 'patch']),
    created: z.boolean().describe('True when the file did not exist before.'),
  }),
  async run(input, { workspace, limits }) {
    if (input.mode === 'write') {
      const bytes = encodeText(input.content ?? '')
      const written = await workspace.writeFile(input.path, bytes, limits.maxFileBytes)
      return { path: written.path, bytes_written: bytes.byteLength, mode: input.mode, created: written.created }
    }
    const written = await editText(workspace, input.path, limits.maxFileBytes, (text, path) => ({
      text: textAfterWrite(text, path, input),
      result: undefined,
    }))
    return { path: written.path, bytes_written: written.bytes, mode: input.mode, created: false }
  },
  dryRun: writeFileDryRun,
  preview: DiffPreview,
  changesNothing: diffChangesNothing,
})
