import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Bytes and entries under a folder, never following symbolic links. Stops counting past maxEntries,
 * so a command that creates millions of files cannot make the watchdog itself expensive.
 */
export async function diskUsage(folder: string, maxEntries: number): Promise<{ bytes: number; entries: number }> {
  let bytes = 0
  let entries = 0
  const pending = [folder]
  while (pending.length > 0 && entries <= maxEntries) {
    const current = pending.pop() as string
    const children = await readdir(current, { withFileTypes: true }).catch(() => [])
    for (const child of children) {
      entries++
      const path = join(current, child.name)
      if (child.isDirectory()) pending.push(path)
      else if (child.isFile()) bytes += (await lstat(path).catch(() => ({ size: 0 }))).size
    }
  }
  return { bytes, entries }
}

export function workspaceWatchdog(folder: string, maxBytes: number, maxEntries: number) {
  return async (): Promise<string | undefined> => {
    const usage = await diskUsage(folder, maxEntries)
    if (usage.entries > maxEntries) return 'workspace file count'
    return usage.bytes > maxBytes ? 'workspace size' : undefined
  }
}
