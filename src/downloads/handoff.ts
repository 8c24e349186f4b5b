import type { z } from 'zod'
import { sha256Hex } from '../core/digest'
import { ToolError } from '../core/errors'
import { baseNameOf, extensionOf, mimeTypeOf } from '../core/mime'
import { normalizeWorkspacePath } from '../core/paths'
import type { HttpClient } from '../net/http'
import type { Workspace } from '../workspace/workspace'
import type { FileLinks } from './links'
import type { FileInputFields, GeneratedFile } from './schemas'

export interface OutputFile {
  /** The caller's output_path, if any. */
  outputPath: string | undefined
  /** Used for the generated name when there is no output_path, e.g. the document title. */
  suggestedName: string
  /** Without the dot, e.g. "pdf". */
  extension: string
  bytes: Uint8Array
}

function slug(text: string): string {
  const cut = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '')
  return cut || 'document'
}

function generatedPath(suggestedName: string, extension: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  const random = Array.from(crypto.getRandomValues(new Uint8Array(3)), (b) => b.toString(16).padStart(2, '0')).join('')
  return `outputs/${slug(suggestedName)}-${stamp}-${random}.${extension}`
}

/** The output path with the right extension: added when missing, refused when it names another format. */
export function resolveOutputPath(outputPath: string | undefined, suggestedName: string, extension: string): string {
  if (outputPath === undefined) return generatedPath(suggestedName, extension)
  const path = normalizeWorkspacePath(outputPath, { field: 'output_path' })
  const current = extensionOf(path)
  if (current === extension) return path
  if (current === '' || !/^[a-z0-9]{1,5}$/.test(current)) return `${path}.${extension}`
  throw new ToolError(
    'validation',
    `output_path ${JSON.stringify(path)} ends in .${current}, but this makes a .${extension} file.`,
    {
      hint: `Give output_path the extension .${extension}, or leave it out for a generated name.`,
      details: { field: 'output_path' },
    },
  )
}

/** What the hand-off needs of a call: a subset of the tool context, so this layer knows nothing of tools. */
export interface HandoffContext {
  workspace: Workspace
  limits: { maxFileBytes: number }
  links: FileLinks | undefined
  http: HttpClient | undefined
  signal: AbortSignal
  /** Origin of the request, for links when no public URL is set. */
  origin?: string | undefined
}

/** Where a dry run says a generated file would go, and whether it would replace one. */
export interface OutputPreview {
  path: string
  /** True when no output_path was given: the real call picks a new name of this form. */
  generated: boolean
  overwrites: boolean
}

/**
 * Every check saveOutputFile makes before it writes, writing nothing: links can be issued, the path
 * and extension are valid, no file or folder is in the way (the size is only known once made).
 */
export async function previewOutputFile(
  context: Pick<HandoffContext, 'workspace' | 'limits' | 'links'>,
  file: Omit<OutputFile, 'bytes'>,
): Promise<OutputPreview> {
  requireLinks(context)
  const path = resolveOutputPath(file.outputPath, file.suggestedName, file.extension)
  const { exists } = await context.workspace.checkWrite(path, undefined, context.limits.maxFileBytes)
  return { path, generated: file.outputPath === undefined, overwrites: exists }
}

/** Stores a generated file in the workspace and returns its hand-off record with a download URL. */
export async function saveOutputFile(context: HandoffContext, file: OutputFile): Promise<GeneratedFile> {
  const links = requireLinks(context)
  const path = resolveOutputPath(file.outputPath, file.suggestedName, file.extension)
  const written = await context.workspace.writeFile(path, file.bytes, context.limits.maxFileBytes)
  return recordOf(context, links, written.path, file.bytes)
}

/** The hand-off record of a file already in the workspace (one a command wrote), with a fresh link. */
export async function existingFileRecord(context: HandoffContext, path: string): Promise<GeneratedFile> {
  const links = requireLinks(context)
  const file = await context.workspace.readFile(path, context.limits.maxFileBytes)
  return recordOf(context, links, file.path, file.bytes)
}

function requireLinks(context: Pick<HandoffContext, 'links'>): FileLinks {
  if (context.links) return context.links
  throw new ToolError('unavailable', 'This deployment cannot issue download links.', {
    notOffered: true,
    hint: 'The file tools can still read the workspace; ask the operator to enable file links.',
  })
}

async function recordOf(
  context: HandoffContext,
  links: FileLinks,
  path: string,
  bytes: Uint8Array,
): Promise<GeneratedFile> {
  const name = baseNameOf(path)
  const mimeType = mimeTypeOf(name)
  const [sha256, link] = await Promise.all([
    sha256Hex(bytes),
    links.issue({ workspace: context.workspace, path, name, mimeType, origin: context.origin }),
  ])
  return {
    path,
    name,
    mime_type: mimeType,
    size: bytes.byteLength,
    sha256,
    url: link.url,
    expires_at: link.expiresAt.toISOString(),
  }
}

export function fileOutput(files: GeneratedFile[]) {
  return { files, openaiFileResponse: files.map((file) => file.url) }
}

export interface InputFile {
  name: string
  bytes: Uint8Array
  /** Where it came from, for messages: a workspace path or the attachment's name. */
  source: string
  mimeType: string | undefined
}

type FileInput = { [K in keyof typeof FileInputFields]?: z.output<(typeof FileInputFields)[K]> }

/** Reads the file a tool works on: a workspace path, or the first ChatGPT attachment (downloaded SSRF-safely). */
export async function readInputFile(input: FileInput, context: HandoffContext): Promise<InputFile> {
  const maxBytes = context.limits.maxFileBytes
  const reference = input.openaiFileIdRefs?.[0]
  if (input.path !== undefined && reference) {
    throw new ToolError('validation', 'Send either path or openaiFileIdRefs, not both.', {
      hint: 'Use path for a workspace file, or openaiFileIdRefs for a file attached in ChatGPT.',
      details: { field: 'path' },
    })
  }
  if (input.path !== undefined) {
    const file = await context.workspace.readFile(input.path, maxBytes)
    return { name: baseNameOf(file.path), bytes: file.bytes, source: file.path, mimeType: undefined }
  }
  if (!reference) {
    throw new ToolError('validation', 'No file given: send path or openaiFileIdRefs.', {
      hint: 'Pass path with a workspace file (see list_files), or openaiFileIdRefs with an attached file.',
      details: { field: 'path' },
    })
  }
  if (!context.http) {
    throw new ToolError('unavailable', 'This deployment cannot download attached files.', {
      notOffered: true,
      hint: 'Upload the file into the workspace with write_file and pass its path instead.',
    })
  }
  const response = await context.http.request({ url: reference.download_link, maxBytes, signal: context.signal })
  if (response.status !== 200) {
    throw new ToolError('connection', `Downloading ${reference.name} failed with HTTP ${response.status}.`, {
      hint: 'The attachment link may have expired; attach the file again, or write it to the workspace and pass path.',
      details: { field: 'openaiFileIdRefs.0.download_link', status: response.status },
    })
  }
  if (response.truncated) {
    throw new ToolError('size_exceeded', `${reference.name} is larger than ${maxBytes} bytes.`, {
      hint: `Attach a file of at most ${maxBytes} bytes.`,
      details: { limit: maxBytes },
    })
  }
  return {
    name: reference.name,
    bytes: response.body,
    source: reference.name,
    mimeType: reference.mime_type ?? response.headers['content-type'],
  }
}
