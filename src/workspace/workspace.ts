import { ToolError } from '../core/errors'
import { isValidIdentifier, normalizeWorkspacePath } from '../core/paths'
import { markWorkspaceChanged } from '../storage/change-markers'
import { retryOnConflict } from '../storage/compare-and-swap'
import { workspaceKeys } from '../storage/layout'
import type { ObjectInfo, ObjectStore } from '../storage/store'
import { quotaStore, type TenantQuota } from './quota'

export interface WorkspaceEntry {
  /** Path relative to the workspace root. */
  path: string
  name: string
  type: 'file' | 'dir'
  /** Bytes for files, 0 for folders. */
  size: number
  modified_at?: string
}

export interface WorkspaceListing {
  entries: WorkspaceEntry[]
  truncated: boolean
}

export interface ListOptions {
  recursive: boolean
  limit: number
  /** Keeps an entry when it returns true; filtered entries do not count against the limit. */
  filter?: (entry: WorkspaceEntry, relativePath: string) => boolean
}

export interface Workspace {
  readonly tenant: string
  readonly id: string
  /**
   * The workspace's store (quota-checked). A writer that changes workspace objects through it directly
   * must call markWorkspaceChanged afterwards, as writeFile and deleteFile do, or sandbox copies of the
   * workspace miss the change until their next full listing (storage/change-markers.ts).
   */
  readonly storage: ObjectStore
  /** Storage key prefix of the workspace root, ending in '/'. */
  readonly prefix: string
  /** The storage key of a workspace path (already normalized). */
  keyOf(path: string): string
  readFile(path: string, maxBytes: number): Promise<{ path: string; bytes: Uint8Array; info: ObjectInfo }>
  exists(path: string): Promise<boolean>
  /**
   * Creates or replaces the whole file by compare-and-swap on the version it finds (If-None-Match for a
   * new file), so the quota counts the version it really replaced; `created` says which it was.
   */
  writeFile(
    path: string,
    bytes: Uint8Array,
    maxBytes: number,
  ): Promise<{ path: string; info: ObjectInfo; created: boolean }>
  /**
   * Reads the file, computes its new content with `edit`, and writes it with If-Match on the etag it read.
   * When another writer landed in between, it reads again and applies `edit` to that version (a bounded
   * number of times); an edit that no longer applies then is a 409 naming the change. Never a lock.
   */
  editFile<T>(
    path: string,
    maxBytes: number,
    edit: (file: {
      path: string
      bytes: Uint8Array
      info: ObjectInfo
    }) => Promise<{ bytes: Uint8Array; result: T }> | { bytes: Uint8Array; result: T },
  ): Promise<{ path: string; info: ObjectInfo; bytes: number; result: T }>
  /**
   * Every check writeFile would make of writing `size` bytes (unknown: the path checks only) at the
   * path, writing nothing: the path, the size limit, a file or folder in the way, the tenant's quota.
   */
  checkWrite(path: string, size: number | undefined, maxBytes: number): Promise<{ path: string; exists: boolean }>
  /** Every check deleteFile would make, deleting nothing: whether there is a file to delete. */
  checkDelete(path: string): Promise<{ path: string; exists: boolean }>
  /** Answers deleted: false when there was nothing to delete. */
  deleteFile(path: string): Promise<{ path: string; deleted: boolean }>
  list(path: string, options: ListOptions): Promise<{ path: string; listing: WorkspaceListing }>
}

export function workspacePrefix(tenant: string, workspaceId: string): string {
  if (!isValidIdentifier(tenant)) throw new Error(`Invalid tenant id ${JSON.stringify(tenant)}`)
  if (!isValidIdentifier(workspaceId)) {
    throw new ToolError('validation', `Invalid workspace id ${JSON.stringify(workspaceId)}.`, {
      hint: 'Use a workspace id of 1 to 64 characters from A-Z, a-z, 0-9, ".", "_" and "-", not only dots.',
      details: { field: 'workspace' },
    })
  }
  return workspaceKeys.root(tenant, workspaceId)
}

function sizeExceeded(path: string, size: number, maxBytes: number): ToolError {
  return new ToolError('size_exceeded', `${path} is ${size} bytes; the limit is ${maxBytes} bytes.`, {
    hint: `Keep files at or under ${maxBytes} bytes; read large files in line ranges.`,
    details: { limit: maxBytes, size },
  })
}

function changedUnderEdit(path: string, cause: ToolError): ToolError {
  return new ToolError(
    'conflict',
    `${path} was changed by another writer while this edit was being applied, and the edit no longer applies to the new version: ${cause.message}`,
    {
      hint: 'Read the file again (read_file) and make the edit against its current content.',
      details: { field: 'path' },
      cause,
    },
  )
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1)
}

export interface WorkspaceOptions {
  /**
   * TOOLPORT_TENANT_QUOTA_BYTES: every write through this workspace (writeFile, and tools such as the
   * sandbox sync-back that put through workspace.storage) is checked against the tenant's quota.
   */
  quota?: TenantQuota | undefined
}

export function createWorkspace(
  backing: ObjectStore,
  tenant: string,
  workspaceId: string,
  options: WorkspaceOptions = {},
): Workspace {
  const prefix = workspacePrefix(tenant, workspaceId)
  // Over quota, the wrapped put throws size_exceeded (413) before anything is written.
  const storage = options.quota ? quotaStore(backing, tenant, options.quota) : backing
  const keyOf = (path: string) => prefix + path

  async function isFolder(path: string): Promise<boolean> {
    const page = await storage.list(`${keyOf(path)}/`, { limit: 1 })
    return page.objects.length > 0
  }

  async function missing(path: string): Promise<ToolError> {
    if (await isFolder(path)) {
      return new ToolError('validation', `${path} is a folder, not a file.`, {
        hint: 'Use list_files to see the files inside a folder.',
        details: { field: 'path' },
      })
    }
    return new ToolError('not_found', `File not found: ${path}`, {
      hint: 'Check the path with list_files; paths are relative to the workspace root.',
    })
  }

  /** Whether there is a file to delete at `path`; a folder there is refused as deleteFile refuses it. */
  async function probeDelete(path: string): Promise<{ path: string; exists: boolean }> {
    if (await storage.head(keyOf(path))) return { path, exists: true }
    if (await isFolder(path)) throw await missing(path)
    return { path, exists: false }
  }

  async function assertWritable(path: string): Promise<void> {
    const segments = path.split('/')
    const ancestors = segments.slice(0, -1).map((_, index) => segments.slice(0, index + 1).join('/'))
    const [ancestorObjects, folder] = await Promise.all([
      Promise.all(ancestors.map((ancestor) => storage.head(keyOf(ancestor)))),
      isFolder(path),
    ])
    const fileInTheWay = ancestors.find((_, index) => ancestorObjects[index] !== null)
    if (fileInTheWay !== undefined) {
      throw new ToolError('conflict', `${fileInTheWay} is a file, so ${path} cannot be created under it.`, {
        hint: `Choose a path that does not go through the existing file ${fileInTheWay}.`,
        details: { field: 'path' },
      })
    }
    if (folder) {
      throw new ToolError('conflict', `${path} is a folder; a file cannot replace it.`, {
        hint: 'Write to a file path inside the folder, or choose another name.',
        details: { field: 'path' },
      })
    }
  }

  return {
    tenant,
    id: workspaceId,
    storage,
    prefix,
    keyOf,

    async readFile(rawPath, maxBytes) {
      const path = normalizeWorkspacePath(rawPath)
      const object = await storage.getWithin(keyOf(path), maxBytes)
      if (!object) throw await missing(path)
      if ('tooLarge' in object) throw sizeExceeded(path, object.size, maxBytes)
      if (object.body.byteLength > maxBytes) throw sizeExceeded(path, object.body.byteLength, maxBytes)
      return { path, bytes: object.body, info: object }
    },

    async exists(rawPath) {
      return (await storage.head(keyOf(normalizeWorkspacePath(rawPath)))) !== null
    },

    async writeFile(rawPath, bytes, maxBytes) {
      const path = normalizeWorkspacePath(rawPath)
      if (bytes.byteLength > maxBytes) throw sizeExceeded(path, bytes.byteLength, maxBytes)
      const written = await retryOnConflict(
        async () => {
          const current = await storage.head(keyOf(path))
          // A file that exists settled the file-or-folder rule when it was written; only a new one is checked.
          if (!current) await assertWritable(path)
          const condition = current ? { ifMatch: current.etag } : { ifNoneMatch: '*' as const }
          return { info: await storage.put(keyOf(path), bytes, condition), created: !current }
        },
        { subject: path },
      )
      // Before the answer: a command run after it must find its copy of the workspace out of date.
      await markWorkspaceChanged(backing, prefix)
      return { path, ...written }
    },

    async editFile(rawPath, maxBytes, edit) {
      const path = normalizeWorkspacePath(rawPath)
      const written = await retryOnConflict(
        async (lostRaces) => {
          const file = await this.readFile(path, maxBytes)
          let next: { bytes: Uint8Array; result: unknown }
          try {
            next = await edit(file)
          } catch (error) {
            // The edit applied to the version read first; another writer's version landed since.
            if (lostRaces > 0 && error instanceof ToolError) throw changedUnderEdit(path, error)
            throw error
          }
          if (next.bytes.byteLength > maxBytes) throw sizeExceeded(path, next.bytes.byteLength, maxBytes)
          const info = await storage.put(keyOf(path), next.bytes, { ifMatch: file.info.etag })
          return { info, bytes: next.bytes.byteLength, result: next.result }
        },
        { subject: path },
      )
      await markWorkspaceChanged(backing, prefix)
      return { path, ...written } as { path: string; info: ObjectInfo; bytes: number; result: never }
    },

    async checkWrite(rawPath, size, maxBytes) {
      const path = normalizeWorkspacePath(rawPath)
      if (size !== undefined && size > maxBytes) throw sizeExceeded(path, size, maxBytes)
      const current = await storage.head(keyOf(path))
      if (!current) await assertWritable(path)
      if (size !== undefined && options.quota) {
        await options.quota.checkRoom(backing, tenant, path, current?.size ?? 0, size)
      }
      return { path, exists: current !== null }
    },

    checkDelete: (rawPath) => probeDelete(normalizeWorkspacePath(rawPath)),

    async deleteFile(rawPath) {
      const path = normalizeWorkspacePath(rawPath)
      // Conditional on the version found, so the quota gives back the size of what was really deleted.
      const deleted = await retryOnConflict(
        async () => {
          const current = await storage.head(keyOf(path))
          if (!current) {
            if (await isFolder(path)) throw await missing(path)
            return false
          }
          await storage.delete(keyOf(path), { ifMatch: current.etag })
          return true
        },
        { subject: path },
      )
      if (deleted) await markWorkspaceChanged(backing, prefix)
      return { path, deleted }
    },

    async list(rawPath, options) {
      const path = normalizeWorkspacePath(rawPath, { allowRoot: true })
      if (path !== '' && (await storage.head(keyOf(path)))) {
        throw new ToolError('validation', `${path} is a file, not a folder.`, {
          hint: 'Use read_file to read a file; list_files takes a folder path ("" for the workspace root).',
          details: { field: 'path' },
        })
      }
      const listPrefix = path === '' ? prefix : `${keyOf(path)}/`
      const listing = await collectEntries(storage, listPrefix, prefix, options)
      if (path !== '' && listing.entries.length === 0 && !listing.truncated && !(await isFolder(path))) {
        throw new ToolError('not_found', `Folder not found: ${path}`, {
          hint: 'List the workspace root (path "") to see what exists.',
        })
      }
      return { path, listing }
    },
  }
}

async function collectEntries(
  storage: ObjectStore,
  listPrefix: string,
  workspaceRoot: string,
  options: ListOptions,
): Promise<WorkspaceListing> {
  const entries: WorkspaceEntry[] = []
  const seenFolders = new Set<string>()
  const accept = (entry: WorkspaceEntry): boolean => {
    const relative = entry.path.slice(listPrefix.length - workspaceRoot.length)
    if (options.filter && !options.filter(entry, relative)) return true
    if (entries.length >= options.limit) return false
    entries.push(entry)
    return true
  }
  const folderEntry = (folderPath: string): WorkspaceEntry => ({
    path: folderPath,
    name: baseName(folderPath),
    type: 'dir',
    size: 0,
  })
  let cursor: string | undefined
  do {
    const page = await storage.list(listPrefix, {
      ...(options.recursive ? {} : { delimiter: '/' as const }),
      ...(cursor ? { cursor } : {}),
    })
    for (const folder of page.prefixes) {
      if (!accept(folderEntry(folder.slice(workspaceRoot.length, -1)))) return { entries, truncated: true }
    }
    for (const object of page.objects) {
      const path = object.key.slice(workspaceRoot.length)
      if (options.recursive) {
        // Object stores have no folders; a recursive listing shows each implied folder once.
        const folders = path.split('/').slice(0, -1)
        const base = listPrefix.length - workspaceRoot.length
        for (let depth = 1; depth <= folders.length; depth++) {
          const folderPath = folders.slice(0, depth).join('/')
          if (folderPath.length < base || seenFolders.has(folderPath)) continue
          seenFolders.add(folderPath)
          if (!accept(folderEntry(folderPath))) return { entries, truncated: true }
        }
      }
      const file: WorkspaceEntry = {
        path,
        name: baseName(path),
        type: 'file',
        size: object.size,
        modified_at: object.lastModified.toISOString(),
      }
      if (!accept(file)) return { entries, truncated: true }
    }
    cursor = page.cursor
  } while (cursor)
  return { entries, truncated: false }
}
