import { z } from 'zod'
import type { WorkspaceEntry } from '../../workspace/workspace'
import { defineTool } from '../tool'
import { DeletePreview, deleteFileDryRun } from './dry-run'
import { globFilter } from './glob'
import { WorkspacePath } from './schemas'

export const deleteFile = defineTool({
  name: 'delete_file',
  title: 'Delete file',
  description:
    'Delete one file from the workspace. Succeeds with deleted: false when the file does not exist; refuses folders.',
  effect: 'destructive',
  // Deleting again leaves the workspace as it is.
  hints: { idempotent: true },
  callTitle: (input) => `Delete ${input.path}`,
  input: z.strictObject({ path: WorkspacePath }),
  output: z.object({
    path: z.string(),
    deleted: z.boolean().describe('False when there was no such file.'),
  }),
  async run(input, { workspace }) {
    return workspace.deleteFile(input.path)
  },
  dryRun: deleteFileDryRun,
  preview: DeletePreview,
  changesNothing: (preview) => DeletePreview.safeParse(preview).data?.deletes.length === 0,
})

const Entry = z.object({
  path: z.string().describe('Path relative to the workspace root.'),
  name: z.string(),
  type: z.enum(['file', 'dir']),
  size: z.number().int().describe('Bytes for files; 0 for folders.'),
  modified_at: z.string().optional(),
})

// Room kept for the other members of the response next to `entries`.
const responseOverhead = 2_000

function matcherFor(glob: string | undefined, recursive: boolean) {
  if (!glob) return undefined
  // A pattern without '/' matches names at any depth when recursive, like `find -name`.
  const isMatch = globFilter(glob, { basename: recursive })
  return (_entry: WorkspaceEntry, relativePath: string) => isMatch(relativePath)
}

export const listFiles = defineTool({
  name: 'list_files',
  title: 'List files',
  description:
    'List the files and folders in a workspace folder ("" for the root), with type, size and name. Optionally recursive and filtered by a glob such as "**/*.ts".',
  effect: 'read',
  callTitle: (input) => `List ${input.path.replace(/^\.?\/?$/, '') || 'workspace root'}`,
  input: z.strictObject({
    path: z.string().max(1024).default('').describe('Folder relative to the workspace root; "" or "." for the root.'),
    recursive: z.boolean().default(false).describe('List everything below the folder, not only its direct entries.'),
    glob: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe('Keep only paths (relative to the folder) matching this glob.'),
    limit: z.number().int().min(1).max(10_000).default(1000).describe('Maximum number of entries. Default: 1000.'),
  }),
  output: z.object({
    path: z.string(),
    entries: z.array(Entry),
    truncated: z.boolean().describe('True when more entries exist than were returned.'),
    hint: z.string().optional(),
  }),
  async run(input, { workspace, limits }) {
    const filter = matcherFor(input.glob, input.recursive)
    const { path, listing } = await workspace.list(input.path, {
      recursive: input.recursive,
      limit: input.limit,
      ...(filter ? { filter } : {}),
    })
    let budget = limits.maxResponseChars - responseOverhead
    const entries: WorkspaceEntry[] = []
    for (const entry of listing.entries) {
      budget -= JSON.stringify(entry).length + 1
      if (budget < 0) break
      entries.push(entry)
    }
    const truncated = listing.truncated || entries.length < listing.entries.length
    return {
      path,
      entries,
      truncated,
      ...(truncated ? { hint: 'More entries exist; list a subfolder, narrow the glob, or turn off recursive.' } : {}),
    }
  },
})
