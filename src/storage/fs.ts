import { randomUUID } from 'node:crypto'
import {
  type BigIntStats,
  close as closeCallback,
  constants,
  fstat as fstatCallback,
  lstatSync,
  open as openCallback,
  read as readCallback,
  readFile as readFileCallback,
  realpathSync,
} from 'node:fs'
import {
  access,
  type FileHandle,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  realpath,
  rename,
  rm,
  rmdir,
  unlink,
} from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { ToolError } from '../core/errors'
import { assertValidKey, assertValidPrefix, clampListLimit, compareKeys, isValidKey, selectListPage } from './keys'
import type { ListOptions, ListResult, ObjectBody, ObjectInfo, ObjectStore, ObjectStream, StoredObject } from './store'
import { timeSlices } from './time-slices'

/**
 * An ObjectStore on a local directory: key 'a/b' is the file '<root>/a/b'. The root may be shared
 * with processes we do not trust (a sandbox writing into a workspace), so every path is checked
 * (inspect, walk) and a symbolic link anywhere below the root is refused rather than followed.
 */
export interface FsStorageOptions {
  root: string
}

/** Temp files live inside the root so the final rename never crosses filesystems. */
const tempFolder = '.toolport-tmp'
const symlinkHint = 'Symbolic links are not followed by the storage layer.'
// O_NONBLOCK: if a FIFO is swapped in after the lstat check, open must not hang waiting for a writer.
const readFlags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
const tempFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
// Node's largest single read (kIoMaxLength); fs.readFile refuses files above it.
const maxSingleRead = 2 ** 31 - 1
// A concurrent delete may prune a freshly made parent folder before our rename lands in it.
const renameAttempts = 3

export async function createFsStorage(options: FsStorageOptions): Promise<ObjectStore> {
  await mkdir(options.root, { recursive: true })
  const root = await realpath(options.root)
  const pathOf = (key: string) => join(root, ...key.split('/'))

  async function openForRead(key: string): Promise<{ handle: FileHandle; stats: BigIntStats } | null> {
    const found = await inspect(root, key)
    if (!found?.isFile()) return null
    let handle: FileHandle
    try {
      handle = await open(pathOf(key), readFlags)
    } catch (error) {
      if (hasCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return null
      throw error
    }
    try {
      const stats = await handle.stat({ bigint: true })
      if (stats.isFile()) return { handle, stats }
    } catch (error) {
      await handle.close()
      throw error
    }
    await handle.close()
    return null
  }

  // get takes the fs callback API with a plain descriptor: each fs/promises call and FileHandle
  // costs about twice the CPU of the same callback call, which shows on every small read.
  async function get(key: string): Promise<StoredObject | null> {
    const found = await inspect(root, key)
    if (!found?.isFile()) return null
    let fd: number
    try {
      fd = await settle<number>((done) => openCallback(pathOf(key), readFlags, done))
    } catch (error) {
      if (hasCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return null
      throw error
    }
    try {
      const stats = await settle<BigIntStats>((done) => fstatCallback(fd, { bigint: true }, done))
      if (!stats.isFile()) return null
      return { ...infoOf(key, stats), body: await readWhole(fd, stats) }
    } finally {
      await settle<void>((done) => closeCallback(fd, done))
    }
  }

  async function getStream(key: string): Promise<ObjectStream | null> {
    const opened = await openForRead(key)
    if (!opened) return null
    // The read stream closes the handle when it ends, fails or is cancelled.
    const body = Readable.toWeb(opened.handle.createReadStream()) as unknown as ReadableStream<Uint8Array>
    return { ...infoOf(key, opened.stats), body }
  }

  async function head(key: string): Promise<ObjectInfo | null> {
    const found = await inspect(root, key)
    return found?.isFile() ? infoOf(key, found) : null
  }

  /**
   * Writes body to a temp file, then puts it at key: `replace` renames it over whatever is there (put),
   * `create` links it and fails with EEXIST when the key is taken. The temp name never outlives the call.
   */
  async function write(key: string, body: ObjectBody, mode: 'replace' | 'create'): Promise<BigIntStats> {
    const tempPath = join(root, tempFolder, `${randomUUID()}.tmp`)
    try {
      await prepareParents(root, key)
      await prepareTempFolder(root)
      const written = await writeTempFile(tempPath, body)
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

  async function put(key: string, body: ObjectBody): Promise<ObjectInfo> {
    return infoOf(key, await write(key, body, 'replace'))
  }

  async function create(key: string, body: Uint8Array | string): Promise<boolean> {
    try {
      await write(key, body, 'create')
      return true
    } catch (error) {
      if (hasCode(error, 'EEXIST')) return false
      throw error
    }
  }

  async function list(prefix: string, options: ListOptions): Promise<ListResult> {
    const slash = prefix.lastIndexOf('/')
    const folderKey = slash === -1 ? '' : prefix.slice(0, slash)
    if (folderKey !== '' && !(await isPlainFolder(root, folderKey))) return { objects: [], prefixes: [] }
    const entries = await collectEntries(root, folderKey, prefix.slice(slash + 1), options)
    const page = selectListPage(entries, options.cursor, clampListLimit(options.limit))
    const result: ListResult = { objects: [], prefixes: [] }
    const statNow = (path: string): BigIntStats | null => {
      try {
        return lstatSync(path, { bigint: true })
      } catch (error) {
        if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
        throw error
      }
    }
    // A promise per lstat costs several times the syscall itself (a 1,000-key page: ~17 ms against
    // ~4 ms synchronously), so the page is stat'ed synchronously, in time slices.
    const slices = timeSlices()
    for (const entry of page.entries) {
      if (entry.endsWith('/')) {
        result.prefixes.push(entry)
        continue
      }
      await slices.pause()
      const stats = statNow(pathOf(entry))
      // Gone or replaced since the directory was read: leave it out of this page.
      if (stats?.isFile()) result.objects.push(infoOf(entry, stats))
    }
    if (page.cursor !== undefined) result.cursor = page.cursor
    return result
  }

  async function remove(key: string): Promise<void> {
    // A directory (or any other non-file) is not an object, so there is nothing to delete.
    if (!(await inspect(root, key))?.isFile()) return
    try {
      await unlink(pathOf(key))
    } catch (error) {
      if (!hasCode(error, 'ENOENT')) throw error
    }
    await pruneEmptyParents(root, key)
  }

  async function copy(fromKey: string, toKey: string): Promise<ObjectInfo> {
    const source = await getStream(fromKey)
    if (!source) throw new ToolError('not_found', 'The object to copy does not exist.')
    return put(toKey, source.body)
  }

  return {
    driver: 'fs',
    get: (key) => guarded(() => get(checkedKey(key))),
    getStream: (key) => guarded(() => getStream(checkedKey(key))),
    head: (key) => guarded(() => head(checkedKey(key))),
    put: (key, body) => guarded(() => put(checkedKey(key), body)),
    create: (key, body) => guarded(() => create(checkedKey(key), body)),
    list: (prefix, options = {}) => guarded(() => list(checkedPrefix(prefix), options)),
    delete: (key) => guarded(() => remove(checkedKey(key))),
    copy: (fromKey, toKey) => guarded(() => copy(checkedKey(fromKey), checkedKey(toKey))),
    check: async () => {
      try {
        await access(root, constants.R_OK | constants.W_OK | constants.X_OK)
      } catch (cause) {
        throw new ToolError('unavailable', 'Storage is unavailable.', { cause, origin: 'storage' })
      }
    },
  }
}

function checkedKey(key: string): string {
  assertValidKey(key)
  if (key === tempFolder || key.startsWith(`${tempFolder}/`)) throw reservedError()
  return key
}

function checkedPrefix(prefix: string): string {
  assertValidPrefix(prefix)
  if (prefix.startsWith(`${tempFolder}/`)) throw reservedError()
  return prefix
}

function reservedError(): ToolError {
  return new ToolError('permission_denied', 'This storage key is reserved.', {
    hint: `Names under "${tempFolder}/" are used by the storage layer itself; choose another name.`,
  })
}

function symlinkError(cause?: unknown): ToolError {
  return new ToolError('permission_denied', 'The storage path contains a symbolic link.', { hint: symlinkHint, cause })
}

function infoOf(key: string, stats: BigIntStats): ObjectInfo {
  // Each put renames a fresh file into place, so the inode changes with every write; size and the
  // nanosecond mtime guard against an inode number being reused.
  const etag = `${stats.ino.toString(36)}-${stats.size.toString(36)}-${stats.mtimeNs.toString(36)}`
  return { key, size: Number(stats.size), etag, lastModified: stats.mtime }
}

/**
 * What walk(root, key) answers, without a thread-pool round trip per component. root is canonical
 * and keys have no '.', '..' or empty segments, so realpath of the parent folder equals its literal
 * path exactly when no component above the final one is a symlink and all of them are folders; the
 * final component then gets its own lstat, as in walk. Any other outcome (a missing or file
 * component, a symlink, any error) is settled by walk itself, so answers and errors are walk's.
 *
 * Both calls are synchronous: metadata of a local folder is answered from the kernel's caches in
 * microseconds, while each asynchronous call is a thread-pool hop that under load cost more than
 * the rest of a small read_file together (a --cpu-prof on 2 cores). The data itself is read
 * asynchronously.
 */
async function inspect(root: string, key: string): Promise<BigIntStats | null> {
  const slash = key.lastIndexOf('/')
  if (slash !== -1) {
    const parent = join(root, ...key.slice(0, slash).split('/'))
    if (realpathOrNull(parent) !== parent) return walk(root, key)
  }
  let stats: BigIntStats | null
  try {
    stats = lstatSync(join(root, ...key.split('/')), { bigint: true, throwIfNoEntry: false }) ?? null
  } catch (error) {
    if (!hasCode(error, 'ENOENT', 'ENOTDIR')) throw error
    stats = null
  }
  if (stats?.isSymbolicLink()) throw symlinkError()
  return stats
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync.native(path)
  } catch {
    return null
  }
}

/** The whole file behind fd whose fstat is `stats`: as fs.readFile, which reads up to the size its own fstat reports. */
async function readWhole(fd: number, stats: BigIntStats): Promise<Uint8Array> {
  const size = Number(stats.size)
  // A file that reports no size is read to its end, and one past Node's single-read limit gets
  // readFile's own error: both exactly as FileHandle.readFile did.
  if (size === 0 || size > maxSingleRead) {
    return new Uint8Array(await settle<Buffer>((done) => readFileCallback(fd, done)))
  }
  const buffer = new Uint8Array(size)
  let filled = 0
  while (filled < size) {
    const bytesRead = await settle<number>((done) => readCallback(fd, buffer, filled, size - filled, null, done))
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return filled === size ? buffer : buffer.subarray(0, filled)
}

/** A node:fs callback call as a promise. */
function settle<T>(call: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => call((error, value) => (error ? reject(error) : resolve(value))))
}

/**
 * lstat each component of key below root. Returns the final component's stats, or null when some
 * component is missing or is a file where a folder would have to be. A symlink anywhere throws.
 */
async function walk(root: string, key: string): Promise<BigIntStats | null> {
  const segments = key.split('/')
  let path = root
  for (const [index, segment] of segments.entries()) {
    path = join(path, segment)
    const stats = await lstatOrNull(path)
    if (!stats) return null
    if (stats.isSymbolicLink()) throw symlinkError()
    if (index === segments.length - 1) return stats
    if (!stats.isDirectory()) return null
  }
  return null
}

async function lstatOrNull(path: string): Promise<BigIntStats | null> {
  try {
    return await lstat(path, { bigint: true })
  } catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
    throw error
  }
}

async function isPlainFolder(root: string, folderKey: string): Promise<boolean> {
  try {
    return (await walk(root, folderKey))?.isDirectory() ?? false
  } catch (error) {
    // Listing treats a symlinked folder as absent instead of failing: it simply holds no objects.
    if (error instanceof ToolError) return false
    throw error
  }
}

/** Creates missing parent folders and checks the target's place; refuses symlinks on the way. */
async function prepareParents(root: string, key: string): Promise<void> {
  const segments = key.split('/')
  const parent = join(root, ...segments.slice(0, -1))
  // When realpath equals the literal path (see inspect, also for why it is synchronous) every
  // parent already exists as a real folder, so there is nothing to create or refuse; otherwise
  // createParents settles it.
  if (segments.length > 1 && realpathOrNull(parent) !== parent) {
    await createParents(root, segments.slice(0, -1))
  }
  const target = await lstatOrNull(join(parent, segments.at(-1) as string))
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
async function writeTempFile(tempPath: string, body: ObjectBody): Promise<BigIntStats> {
  const handle = await open(tempPath, tempFlags)
  try {
    await writeBody(handle, body)
    // Without a sync the rename can reach the disk before the data, leaving an empty file after a crash.
    await handle.datasync()
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
      await place(tempPath, join(root, ...key.split('/')))
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
async function pruneEmptyParents(root: string, key: string): Promise<void> {
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

/**
 * Keys (and, with a delimiter, common prefixes) under folderKey whose name after the folder starts
 * with namePrefix. Only the folder holding the prefix is read; symlinks, special files and names
 * that are not valid keys are skipped, and subtrees entirely before the cursor are not entered.
 */
async function collectEntries(
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

  await visit(folderKey === '' ? root : join(root, ...folderKey.split('/')), folderKey, namePrefix)
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

function hasCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && codes.includes((error as NodeJS.ErrnoException).code ?? '')
}

async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    throw toStorageError(error)
  }
}

/**
 * Filesystem failures become ToolErrors without paths in the message (the root is server detail).
 * Anything that is not a system error, such as the caller's own body stream failing, passes through.
 */
function toStorageError(error: unknown): unknown {
  if (error instanceof ToolError || !(error instanceof Error) || !('syscall' in error)) return error
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new ToolError('unavailable', 'Storage is full.', {
        origin: 'storage',
        cause: error,
        hint: 'The storage volume is full; delete files that are no longer needed or try again later.',
      })
    case 'EACCES':
    case 'EPERM':
      return new ToolError('permission_denied', 'Storage refused access to this object.', { cause: error })
    case 'ELOOP':
      return symlinkError(error)
    case 'ENOTDIR':
    case 'EISDIR':
      return new ToolError('conflict', 'A file and a folder collide at this key.', { cause: error })
    default:
      return new ToolError('unavailable', 'Storage is unavailable.', { cause: error, origin: 'storage' })
  }
}
