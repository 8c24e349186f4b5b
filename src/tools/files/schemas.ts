import { z } from 'zod'
import { isToolError } from '../../core/errors'
import { normalizeWorkspacePath } from '../../core/paths'

/**
 * Checks a path at the schema, so a bad one is refused before anything runs (also for async jobs).
 * `file`: the path names a file, so a trailing "/" (a folder) is refused rather than dropped: "notes/"
 * would otherwise write or read the file "notes".
 */
export function workspacePathSchema(options: { allowRoot?: boolean; file?: boolean } = {}) {
  return z.string().superRefine((value, context) => {
    try {
      normalizeWorkspacePath(value, options)
    } catch (error) {
      if (!isToolError(error)) throw error
      context.addIssue({ code: 'custom', message: error.message, params: { hint: error.hint } })
      return
    }
    if (options.file && /\/\.?$/.test(value)) {
      context.addIssue({
        code: 'custom',
        message: `Invalid path "${value.slice(0, 100)}": it ends in "/", which names a folder, not a file`,
        params: { hint: 'Name the file itself, e.g. "notes/todo.md"; list_files shows what a folder holds.' },
      })
    }
  })
}

export const WorkspacePath = z
  .string()
  .min(1)
  .max(1024)
  .pipe(workspacePathSchema({ file: true }))
  .describe(
    'File path relative to the workspace root, separated by "/", e.g. "src/index.ts"; at most 768 bytes (UTF-8) once normalized.',
  )

export const LineNumber = z.number().int().min(1).max(100_000_000)

export const EditOutput = z.object({
  path: z.string().describe('The normalized workspace path that was written.'),
  bytes_written: z.number().int().describe('Size of the file after the change, in bytes.'),
})
