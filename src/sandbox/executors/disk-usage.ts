import { type Dirent, lstatSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { timeSlices } from '../../storage/time-slices'

/**
 * Bytes and entries under a folder, never following symbolic links. Stops counting past maxEntries,
 * so a command that creates millions of files cannot make the watchdog itself expensive.
 */
export async function diskUsage(folder: string, maxEntries: number): Promise<{ bytes: number; entries: number }> {
  let bytes = 0
  let entries = 0
  const pending = [folder]
  // Runs every 250 ms beside the command. Synchronous reads in time slices: an awaited lstat per file
  // cost several times the syscall (~30 ms a pass on 1,000 files against a few ms), all of it taken
  // from the command's CPU.
  const slices = timeSlices()
  while (pending.length > 0 && entries <= maxEntries) {
    const current = pending.pop() as string
    for (const child of readdirOrEmpty(current)) {
      entries++
      const path = join(current, child.name)
      if (child.isDirectory()) pending.push(path)
      else if (child.isFile()) bytes += sizeOrZero(path)
      await slices.pause()
    }
  }
  return { bytes, entries }
}

// The sandbox changes the tree while it is measured: whatever vanished or became unreadable counts as nothing.
function readdirOrEmpty(path: string): Dirent[] {
  try {
    return readdirSync(path, { withFileTypes: true })
  } catch {
    return []
  }
}

function sizeOrZero(path: string): number {
  try {
    return lstatSync(path).size
  } catch {
    return 0
  }
}

export function workspaceWatchdog(folder: string, maxBytes: number, maxEntries: number) {
  return async (): Promise<string | undefined> => {
    const usage = await diskUsage(folder, maxEntries)
    if (usage.entries > maxEntries) return 'workspace file count'
    return usage.bytes > maxBytes ? 'workspace size' : undefined
  }
}
