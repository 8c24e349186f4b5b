import { z } from 'zod'
import { isToolError } from '../../core/errors'
import { normalizeWorkspacePath } from '../../core/paths'

/** Checks a path at the schema, so a bad one is refused before anything runs (also for async jobs). */
export function workspacePathSchema(options: { allowRoot?: boolean } = {}) {
  return z.string().superRefine((value, context) => {
    try {
      normalizeWorkspacePath(value, options)
    } catch (error) {
      if (!isToolError(error)) throw error
      context.addIssue({ code: 'custom', message: error.message, params: { hint: error.hint } })
    }
  })
}

export const WorkspacePath = z
  .string()
  .min(1)
  .max(1024)
  .pipe(workspacePathSchema())
  .describe('File path relative to the workspace root, separated by "/", e.g. "src/index.ts".')

export const LineNumber = z.number().int().min(1).max(100_000_000)

export const EditOutput = z.object({
  path: z.string().describe('The normalized workspace path that was written.'),
  bytes_written: z.number().int().describe('Size of the file after the change, in bytes.'),
})
