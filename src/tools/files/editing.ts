import type { Workspace } from '../../workspace/workspace'
import { decodeEditableText, encodeText } from './text'

/**
 * Applies a text edit by compare-and-swap (Workspace.editFile): `edit` gets the file's current text and
 * may run again on a newer version when another writer landed first, so it must be a pure function of
 * the text (as the file tools' transforms are).
 */
export async function editText<T>(
  workspace: Workspace,
  path: string,
  maxBytes: number,
  edit: (text: string, path: string) => Promise<{ text: string; result: T }> | { text: string; result: T },
): Promise<{ path: string; bytes: number; result: T }> {
  const written = await workspace.editFile(path, maxBytes, async (file) => {
    const edited = await edit(decodeEditableText(file.bytes, file.path), file.path)
    return { bytes: encodeText(edited.text), result: edited.result }
  })
  return { path: written.path, bytes: written.bytes, result: written.result as T }
}
