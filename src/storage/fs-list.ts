import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { hasCode } from './fs-errors'
import { keyPath, tempFolder } from './fs-paths'
import { compareKeys, isValidKey } from './keys'
import type { ListOptions } from './store'

/**
 * Keys (and, with a delimiter, common prefixes) under folderKey whose name after the folder starts
 * with namePrefix. Only the folder holding the prefix is read; symlinks, special files and names
 * that are not valid keys are skipped, and subtrees entirely before the cursor are not entered.
 */
export async function collectEntries(
  root: string,
  folderKey: string,
  namePrefix: string,
  options: ListOptions,
): Promise<string[]> {
  const entries: string[] = []
  const { cursor, delimiter } = options

  async function visit(path: string, key: string, nameStart: string): Promise<void> {
    for (const dirent of await readdirOrEmpty(path)) {
      if (!dirent.name.startsWith(nameStart)) continue
      if (key === '' && dirent.name === tempFolder) continue
      const childKey = key === '' ? dirent.name : `${key}/${dirent.name}`
      if (!isValidKey(childKey)) continue
      if (dirent.isFile()) {
        entries.push(childKey)
      } else if (dirent.isDirectory()) {
        const folder = `${childKey}/`
        const childPath = join(path, dirent.name)
        if (delimiter) {
          if (cursor !== undefined && compareKeys(folder, cursor) <= 0) continue
          if (await containsObject(childPath)) entries.push(folder)
        } else {
          if (cursor !== undefined && compareKeys(folder, cursor) < 0 && !cursor.startsWith(folder)) continue
          await visit(childPath, childKey, '')
        }
      }
    }
  }

  await visit(folderKey === '' ? root : keyPath(root, folderKey), folderKey, namePrefix)
  return entries
}

/** S3 shows a common prefix only when some object lies below it; empty leftover folders do not count. */
async function containsObject(folderPath: string): Promise<boolean> {
  for (const dirent of await readdirOrEmpty(folderPath)) {
    if (dirent.isFile() && isValidKey(dirent.name)) return true
    if (dirent.isDirectory() && isValidKey(dirent.name) && (await containsObject(join(folderPath, dirent.name)))) {
      return true
    }
  }
  return false
}

async function readdirOrEmpty(path: string) {
  try {
    return await readdir(path, { withFileTypes: true })
  } catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return []
    throw error
  }
}
