import type { ObjectInfo } from '../../storage/store'
import type { Workspace } from '../../workspace/workspace'
import { encodeText } from './text'

export interface FileForEdit {
  path: string
  bytes: Uint8Array
  info: ObjectInfo
}

/** Writes the edited text back only if nobody replaced the file since it was read. */
export async function writeAfterEdit(
  workspace: Workspace,
  file: FileForEdit,
  text: string,
  maxBytes: number,
): Promise<{ path: string; bytes: number }> {
  const bytes = encodeText(text)
  await workspace.writeFile(file.path, bytes, maxBytes, { ifMatch: file.info.etag })
  return { path: file.path, bytes: bytes.byteLength }
}
