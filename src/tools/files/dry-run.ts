import { z } from 'zod'
import type { Workspace } from '../../workspace/workspace'
import type { DryRunContext } from '../tool'
import { decodeEditableText, decodeText, encodeText } from './text'
import { multiEditText, replaceFirstText, textAfterWrite } from './transforms'

// What a file tool would do, computed with the tool's own text transformation and checked as its
// write would be (path, size limit, a folder in the way, quota); each changes nothing.

/** The preview of the edit tools: a unified diff from the file as it is to the file as the call leaves it. */
export const DiffPreview = z.string().describe('A unified diff of the change (from /dev/null for a new file).')

/** The preview of delete_file. */
export const DeletePreview = z.object({
  deletes: z.array(z.string()).describe('The file that would be deleted; empty when there is none (nothing to do).'),
})

/** A diff with no hunk changes nothing, unless it creates the (empty) file. */
export function diffChangesNothing(preview: unknown): boolean {
  return typeof preview === 'string' && !preview.includes('\n@@') && !preview.includes('--- /dev/null')
}

/** The diff library (jsdiff) loads with the first dry run, not with every server that serves files. */
async function unifiedDiff(
  path: string,
  before: string,
  after: string,
  created: boolean,
  limits: DryRunContext['limits'],
): Promise<string> {
  // Twice the response limit: enough for the cut preview to see that it was cut.
  return (await import('./preview-diff')).unifiedDiff(path, before, after, created, 2 * limits.maxResponseChars)
}

/** The file's text as its edit reads it: UTF-8 throughout (decodeEditableText), as the tool itself refuses anything else. */
async function readText(workspace: Workspace, path: string, maxBytes: number, decode = decodeEditableText) {
  const file = await workspace.readFile(path, maxBytes)
  return { path: file.path, text: decode(file.bytes, file.path) }
}

async function checkedDiff(context: DryRunContext, path: string, before: string, after: string, created = false) {
  await context.workspace.checkWrite(path, encodeText(after).byteLength, context.limits.maxFileBytes)
  return unifiedDiff(path, before, after, created, context.limits)
}

interface WriteInput {
  path: string
  mode: 'write' | 'replace' | 'patch'
  content?: string | undefined
}

interface EditInput {
  path: string
  old_text: string
  new_text: string
}

export const writeFileDryRun = async (input: WriteInput, context: DryRunContext) => {
  const { workspace, limits } = context
  if (input.mode === 'write') {
    const content = input.content ?? ''
    const { path, exists } = await workspace.checkWrite(input.path, encodeText(content).byteLength, limits.maxFileBytes)
    // A whole new content replaces the file, whatever its bytes: the diff shows them as read.
    const before = exists ? (await readText(workspace, path, limits.maxFileBytes, decodeText)).text : ''
    return unifiedDiff(path, before, content, !exists, limits)
  }
  const file = await readText(workspace, input.path, limits.maxFileBytes)
  return checkedDiff(context, file.path, file.text, textAfterWrite(file.text, file.path, input))
}

export const replaceFirstDryRun = async (input: EditInput, context: DryRunContext) => {
  const file = await readText(context.workspace, input.path, context.limits.maxFileBytes)
  return checkedDiff(context, file.path, file.text, replaceFirstText(file.text, file.path, input).text)
}

export const multiEditDryRun = async (
  input: { path: string; edits: { old_text: string; new_text: string }[] },
  context: DryRunContext,
) => {
  const file = await readText(context.workspace, input.path, context.limits.maxFileBytes)
  return checkedDiff(context, file.path, file.text, await multiEditText(file.text, file.path, input.edits))
}

export const deleteFileDryRun = async (input: { path: string }, { workspace }: DryRunContext) => {
  const { path, exists } = await workspace.checkDelete(input.path)
  return { deletes: exists ? [path] : [] }
}
