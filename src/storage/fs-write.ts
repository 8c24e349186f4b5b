import { randomUUID } from 'node:crypto'
import { type BigIntStats, constants } from 'node:fs'
import { type FileHandle, link, lstat, mkdir, open, rename, rm, rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolError } from '../core/errors'
import { hasCode, symlinkError } from './fs-errors'
import { keyPath, lstatOrNull, realpathOrNull, tempFolder } from './fs-paths'
import type { ObjectBody } from './store'

const tempFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
// A concurrent delete may prune a freshly made parent folder before our rename lands in it.
const renameAttempts = 3

/**
 * Writes body to a temp file, then puts it at key: `replace` renames it over whatever is there (put),
 * `create` links it and fails with EEXIST when the key is taken. The temp name never outlives the call.
 * `previous` is the version it replaces: the new one gets a later mtime than it (etags are inode, size
 * and mtime, and the kernel's file clock ticks in milliseconds), so no two versions of a key in a row
 * share an etag, and none shares one with any older version either (the mtimes only grow).
 */
export async function writeObject(
  root: string,
  key: string,
  body: ObjectBody,
  mode: 'replace' | 'create',
  previous?: BigIntStats | null,
): Promise<BigIntStats> {
  const tempPath = join(root, tempFolder, `${randomUUID()}.tmp`)
  try {
    await prepareParents(root, key)
    await prepareTempFolder(root)
    const written = await writeTempFile(tempPath, body, previous?.mtimeNs)
    await moveIntoPlace(root, tempPath, key, mode === 'replace' ? rename : link)
    // A link leaves the temp name as a second name of the object; a rename took it away.
    if (mode === 'create') await rm(tempPath, { force: true }).catch(() => {})
    return written
  } catch (error) {
    if (body instanceof ReadableStream && !body.locked) await body.cancel(error).catch(() => {})
    await rm(tempPath, { force: true }).catch(() => {})
    await pruneEmptyParents(root, key)
    throw error
  }
}

/** Creates missing parent folders and checks the target's place; refuses symlinks on the way. */
async function prepareParents(root: string, key: string): Promise<void> {
  const slash = key.lastIndexOf('/')
  // When realpath equals the literal path (see inspect, also for why it is synchronous) every
  // parent already exists as a real folder, so there is nothing to create or refuse; otherwise
  // createParents settles it.
  if (slash !== -1) {
    const parentKey = key.slice(0, slash)
    const parent = keyPath(root, parentKey)
    if (realpathOrNull(parent) !== parent) await createParents(root, parentKey.split('/'))
  }
  const target = await lstatOrNull(keyPath(root, key))
  if (target?.isSymbolicLink()) throw symlinkError()
  if (target?.isDirectory()) {
    throw new ToolError('conflict', 'A folder already exists where the object would go.', {
      hint: 'Objects and folders cannot share a name; choose another name or delete the folder contents first.',
    })
  }
}

/**
 * Creates missing folders one by one; `mkdir -p` would follow a symlinked component. A delete that
 * empties the last object of a folder prunes it and its empty parents, so a concurrent write can lose a
 * folder of its chain between two steps (mkdir then ENOENT, or gone right after): it starts over.
 */
async function createParents(root: string, folders: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    if (await createParentsOnce(root, folders)) return
    if (attempt >= pruneRetries) throw new ToolError('unavailable', 'Storage is unavailable.', { origin: 'storage' })
  }
}

const pruneRetries = 5

/** false when a concurrent prune removed a folder of the chain under our feet. */
async function createParentsOnce(root: string, folders: string[]): Promise<boolean> {
  let path = root
  for (const segment of folders) {
    path = join(path, segment)
    let stats = await lstatOrNull(path)
    if (!stats) {
      try {
        await mkdir(path)
      } catch (error) {
        if (hasCode(error, 'ENOENT')) return false
        if (!hasCode(error, 'EEXIST')) throw error
      }
      stats = await lstatOrNull(path)
      if (!stats) return false
    }
    if (stats.isSymbolicLink()) throw symlinkError()
    if (!stats.isDirectory()) throw folderConflict()
  }
  return true
}

function folderConflict(): ToolError {
  return new ToolError('conflict', 'An object already exists where a folder is needed.', {
    hint: 'A file cannot contain other files; choose another name or delete that file first.',
  })
}

async function prepareTempFolder(root: string): Promise<void> {
  const path = join(root, tempFolder)
  try {
    await mkdir(path)
  } catch (error) {
    if (!hasCode(error, 'EEXIST')) throw error
  }
  const stats = await lstat(path)
  if (stats.isSymbolicLink()) throw symlinkError()
  if (!stats.isDirectory()) throw new ToolError('unavailable', 'Storage is unavailable.', { origin: 'storage' })
}

/** Returns the stats of the written file: the rename keeps its inode and mtime, so they describe the object. */
async function writeTempFile(
  tempPath: string,
  body: ObjectBody,
  newerThanNs: bigint | undefined,
): Promise<BigIntStats> {
  const handle = await open(tempPath, tempFlags)
  try {
    await writeBody(handle, body)
    // Without a sync the rename can reach the disk before the data, leaving an empty file after a crash.
    await handle.datasync()
    const stats = await handle.stat({ bigint: true })
    if (newerThanNs === undefined || stats.mtimeNs > newerThanNs) return stats
    await handle.utimes(stats.atime, new Date(Number(newerThanNs / 1_000_000n) + 1))
    return await handle.stat({ bigint: true })
  } finally {
    await handle.close()
  }
}

/**
 * Puts the written temp file at the key: rename() for put (replacing what is there), link() for create
 * (failing with EEXIST when the name is taken). Neither follows a final symlink, but a symlinked parent
 * folder would redirect the write, so the parents are checked again right before.
 */
async function moveIntoPlace(
  root: string,
  tempPath: string,
  key: string,
  place: (from: string, to: string) => Promise<void>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await prepareParents(root, key)
    try {
      await place(tempPath, keyPath(root, key))
      return
    } catch (error) {
      if (!hasCode(error, 'ENOENT') || attempt >= renameAttempts) throw error
    }
  }
}

async function writeBody(handle: FileHandle, body: ObjectBody): Promise<void> {
  if (typeof body === 'string') return writeAll(handle, new TextEncoder().encode(body))
  if (body instanceof Uint8Array) return writeAll(handle, body)
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      await writeAll(handle, value)
    }
  } catch (error) {
    // Tell the producer to stop; when the body itself failed this is a harmless no-op.
    await reader.cancel(error).catch(() => {})
    throw error
  } finally {
    reader.releaseLock()
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0
  while (offset < bytes.byteLength) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.byteLength - offset)
    offset += bytesWritten
  }
}

/** Removes folders left empty by a delete, so an empty "folder" vanishes from listings as on S3. */
export async function pruneEmptyParents(root: string, key: string): Promise<void> {
  // Only folders reached without a symlink: rmdir would resolve one in a middle component.
  const folders: string[] = []
  let path = root
  for (const segment of key.split('/').slice(0, -1)) {
    path = join(path, segment)
    const stats = await lstatOrNull(path).catch(() => null)
    if (!stats?.isDirectory()) break
    folders.push(path)
  }
  for (const folder of folders.reverse()) {
    try {
      // Fails on a folder that still holds anything, which ends the pruning.
      await rmdir(folder)
    } catch {
      return
    }
  }
}
