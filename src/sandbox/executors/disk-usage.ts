import { measureTree, type TreeUsage } from '../mirror/tree'

/**
 * Bytes and entries under a folder at any depth, never following symbolic links, through handles
 * relative to each parent (a folder nested past PATH_MAX hides nothing). Stops counting past
 * maxEntries, so a command that creates millions of files cannot make the watchdog itself expensive.
 * Synchronous reads in time slices: an awaited lstat per file cost several times the syscall (~30 ms a
 * pass on 1,000 files against a few ms), all of it taken from the command's CPU.
 */
export function diskUsage(folder: string, maxEntries: number): Promise<TreeUsage> {
  return measureTree(folder, maxEntries)
}

/** Which workspace limit a usage passes, in limit_exceeded's words; undefined within both. */
export function workspaceLimitPassed(usage: TreeUsage, maxBytes: number, maxEntries: number): string | undefined {
  if (usage.entries > maxEntries) return 'workspace file count'
  return usage.bytes > maxBytes ? 'workspace size' : undefined
}

/**
 * The watchdog sampled while a command runs (every 250 ms). It is a guard for the host's disk, not
 * the limit itself: a command can outrun it between two samples, so the shell service measures
 * again once the command is dead and syncs nothing of a workspace past a limit.
 */
export function workspaceWatchdog(
  folder: string,
  maxBytes: number,
  maxEntries: number,
  base: TreeUsage = { bytes: 0, entries: 0 },
) {
  return async (): Promise<string | undefined> => {
    const usage = await diskUsage(folder, Math.max(0, maxEntries - base.entries))
    return workspaceLimitPassed(
      { bytes: usage.bytes + base.bytes, entries: usage.entries + base.entries },
      maxBytes,
      maxEntries,
    )
  }
}
