import { closeSync, openSync, readlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'

/**
 * Opens `path` and keeps the descriptor only when the kernel names the opened file by exactly that
 * path. With O_NOFOLLOW in `flags` a symlink as the final component fails the open, and
 * /proc/self/fd/<fd> names the file the descriptor holds, so a symlink in any folder above it (or a
 * file replaced or removed since) makes the two differ. One open and one readlink prove what
 * inspect proves with a realpath of the parent (a readlink per component) and an lstat, and since
 * the proof is taken on the open file, nothing can be swapped in between the check and the open.
 *
 * null when nothing is proven (a symlink, a missing file, any error): the caller then takes the
 * checked path, whose answers and errors are the storage's own. Synchronous, as inspect: metadata
 * of a local folder is answered from the kernel's caches.
 */
export function openVerified(path: string, flags: number): number | null {
  let fd: number
  try {
    fd = openSync(path, flags)
  } catch {
    return null
  }
  let opened: string | undefined
  try {
    opened = readlinkSync(`/proc/self/fd/${fd}`)
  } catch {}
  if (opened === path) return fd
  closeSync(fd)
  return null
}

/**
 * Whether this process can name its open files through /proc/self/fd (Linux with /proc mounted),
 * checked once per storage on its canonical root; elsewhere openVerified would never prove anything.
 */
export async function namesOpenFiles(root: string): Promise<boolean> {
  const handle = await open(root, 'r').catch(() => null)
  if (!handle) return false
  try {
    return readlinkSync(`/proc/self/fd/${handle.fd}`) === root
  } catch {
    return false
  } finally {
    await handle.close()
  }
}
