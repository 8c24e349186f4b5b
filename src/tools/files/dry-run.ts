import { normalizeWorkspacePath } from '../../core/paths'
import type { Workspace } from '../../workspace/workspace'
import type { DryRunContext } from '../tool'
import { unifiedDiff } from './preview-diff'
import { decodeText } from './text'
import { multiEditText, replaceFirstText, textAfterWrite } from './transforms'

// What a file tool would do, computed with the tool's own text transformation; each changes nothing.

async function readText(workspace: Workspace, path: string, maxBytes: number) {
  const file = await workspace.readFile(path, maxBytes)
  return { path: file.path, text: decodeText(file.bytes, file.path) }
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

export const writeFileDryRun = async (input: WriteInput, { workspace, limits }: DryRunContext) => {
  if (input.mode === 'write') {
    const existed = await workspace.exists(input.path)
    const before = existed ? (await readText(workspace, input.path, limits.maxFileBytes)).text : ''
    return unifiedDiff(input.path, before, input.content ?? '', !existed)
  }
  const file = await readText(workspace, input.path, limits.maxFileBytes)
  return unifiedDiff(file.path, file.text, textAfterWrite(file.text, file.path, input))
}

export const replaceFirstDryRun = async (input: EditInput, { workspace, limits }: DryRunContext) => {
  const file = await readText(workspace, input.path, limits.maxFileBytes)
  return unifiedDiff(file.path, file.text, replaceFirstText(file.text, file.path, input).text)
}

export const multiEditDryRun = async (
  input: { path: string; edits: { old_text: string; new_text: string }[] },
  { workspace, limits }: DryRunContext,
) => {
  const file = await readText(workspace, input.path, limits.maxFileBytes)
  return unifiedDiff(file.path, file.text, await multiEditText(file.text, file.path, input.edits))
}

export const deleteFileDryRun = async (input: { path: string }, { workspace }: DryRunContext) => ({
  deletes: (await workspace.exists(input.path)) ? [normalizeWorkspacePath(input.path)] : [],
})
