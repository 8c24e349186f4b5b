import type { Context } from 'hono'
import type { Principal } from '../../auth/principal'
import type { Caller } from '../../caller/caller'
import type { Catalog } from '../../catalog/catalog'
import type { JsonRecord, SourceSurface } from '../../catalog/entry'
import { sha256Hex } from '../../core/digest'
import { type ErrorCode, isToolError, ToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import { mimeTypeOf } from '../../core/mime'
import { normalizeWorkspacePath } from '../../core/paths'
import { fromBase64Url, toBase64Url } from '../../downloads/signing'
import { toBase64 } from '../../net/content-type'
import { createWorkspace } from '../../workspace/workspace'
import { buildContext, type ContextDeps, renderContext } from '../context-document'
import type { AppEnv } from '../env'
import { problemBody } from '../problem'
import { parseWorkspace } from '../workspace-param'
import { workspaceScheme, workspaceTemplate, workspaceUri } from './resource-uris'

/**
 * MCP's resources, prompts and completions, as plain MCP JSON for any protocol version's server
 * (session.ts for 2024-11-05 to 2025-11-25, modern.ts for 2026-07-28): the workspace's files as
 * resources, the context prompt, and what the caller's MCP sources offer besides tools.
 */
export interface SurfaceDeps {
  caller: Caller
  catalog: Catalog
  context: ContextDeps
  log: Logger
}

/** Who asks, on which workspace: the same as a tools/call of the same request. */
export interface SurfaceRequest {
  principal: Principal
  workspaceId: string
  signal: AbortSignal
}

/** The context prompt: GET /v1/context's text as a user message. */
export const contextPrompt = 'toolport_context'

/** A tool of the catalog explained for a model: its description, effect and schemas. */
export const toolPrompt = 'toolport_tool'

const ownPrompts = new Set([contextPrompt, toolPrompt])

/** Files per resources/list page. */
const pageSize = 100

/** MCP's "resource not found" (JSON-RPC server error range), which resources/read answers for a missing URI. */
export const resourceNotFound = -32002

/**
 * The JSON-RPC error code of a refusal: the caller's mistakes (bad params, a name that is not there, a
 * scope it lacks, a size past the limit) are invalid params; a source or the service failing is an
 * internal error, so a client does not blame its own request.
 */
function protocolCodeOf(code: ErrorCode): number {
  return code === 'connection' || code === 'timeout' || code === 'unavailable' || code === 'internal' ? -32603 : -32602
}

/**
 * A failure of an MCP request as its JSON-RPC error, for either SDK's error class: the problem
 * document as data, a refusal's code by protocolCodeOf, anything not a ToolError an internal error,
 * and a missing resource the version's own code where it has one.
 */
export function protocolFault(
  error: unknown,
  context: Context<AppEnv>,
  log: Logger,
  codes: { resourceNotFound?: number } = {},
): { code: number; message: string; data: unknown } {
  const problem = problemBody(error, context, log)
  const missing =
    isToolError(error) && error.code === 'not_found' && (error.details as { uri?: unknown } | undefined)?.uri
  const code = !isToolError(error)
    ? -32603
    : missing && codes.resourceNotFound !== undefined
      ? codes.resourceNotFound
      : protocolCodeOf(error.code)
  return { code, message: String(problem.detail), data: problem }
}

export function createSurface(deps: SurfaceDeps) {
  const { caller, catalog } = deps

  /** The MCP sources this key may reach: those of which it may call at least one tool. */
  async function sourcesOf(principal: Principal): Promise<SourceSurface[]> {
    const seen = new Set<SourceSurface>()
    for (const entry of (await catalog.view(principal)).entries) if (entry.surface) seen.add(entry.surface)
    return [...seen]
  }

  /**
   * A source's resources and templates for a listing: a source whose server fails or does not answer
   * in its time is left out of the list (and logged), not the reason the whole list fails.
   */
  async function listedBy(surface: SourceSurface, request: SurfaceRequest) {
    const none = { resources: [] as JsonRecord[], templates: [] as JsonRecord[] }
    if (!surface.resources) return none
    return surface.resources(request.signal).catch(skipped(surface, none))
  }

  function skipped<T = JsonRecord[]>(surface: SourceSurface, empty?: T) {
    return (error: unknown): T => {
      deps.log.warn('an MCP source failed to list its resources or prompts', {
        source: surface.source,
        error: error instanceof Error ? error.message : String(error),
      })
      return empty ?? ([] as T)
    }
  }

  /** The same checks as a read_file call of this path: the key may call it, without an approver. */
  async function assertMayRead(request: SurfaceRequest, workspaceId: string, path: string): Promise<void> {
    const call = await caller.prepare({
      principal: request.principal,
      tool: 'read_file',
      readInput: () => ({ path }),
      workspaceId,
      origin: undefined,
    })
    if (call.needsApproval) {
      throw new ToolError('permission_denied', `This key's read_file calls wait for an approver.`, {
        hint: 'Call read_file instead: its answer is a pending approval an approver decides.',
      })
    }
  }

  async function isAllowed(principal: Principal, tool: string): Promise<boolean> {
    try {
      await caller.assertAllowed(principal, tool)
      return true
    } catch {
      return false
    }
  }

  return {
    /** Sources' resources first (one page), then the workspace's files, a page at a time. */
    async listResources(request: SurfaceRequest, cursor: string | undefined) {
      const resources: JsonRecord[] = []
      const position = parseCursor(cursor)
      if (position.sources) {
        for (const surface of await sourcesOf(request.principal)) {
          resources.push(...notOurs((await listedBy(surface, request)).resources, 'uri'))
        }
      }
      // The listing is what list_files would show: a key without it learns no file names here either.
      if (!(await isAllowed(request.principal, 'list_files'))) return { resources }
      const workspace = createWorkspace(deps.context.storage, request.principal.tenant, request.workspaceId)
      const page = await workspace.storage.list(workspace.prefix, {
        limit: pageSize,
        ...(position.files ? { cursor: position.files } : {}),
      })
      for (const object of page.objects) {
        const path = object.key.slice(workspace.prefix.length)
        resources.push({
          uri: workspaceUri(request.workspaceId, path),
          name: path,
          mimeType: mimeTypeOf(path),
          size: object.size,
        })
      }
      return { resources, ...(page.cursor ? { nextCursor: makeCursor(page.cursor) } : {}) }
    },

    async listResourceTemplates(request: SurfaceRequest) {
      const templates: JsonRecord[] = [
        {
          uriTemplate: workspaceTemplate,
          name: 'workspace-file',
          title: 'Workspace file',
          description: 'A file of a toolport workspace, by workspace id and path (what read_file reads).',
        },
      ]
      for (const surface of await sourcesOf(request.principal)) {
        templates.push(...notOurs((await listedBy(surface, request)).templates, 'uriTemplate'))
      }
      return { resourceTemplates: templates }
    },

    async readResource(request: SurfaceRequest, uri: string): Promise<JsonRecord> {
      if (uri.startsWith(workspaceScheme)) return readWorkspaceFile(request, uri)
      const surface = await sourceOfUri(request, uri)
      if (!surface?.readResource) throw missingResource(uri)
      return bounded(await surface.readResource(uri, request.signal), uri)
    },

    /**
     * What a subscription compares (resource-watch.ts): a workspace file's etag ("absent" while there
     * is none: a subscription may wait for a file to appear), or a digest of what a source answers for
     * its resource. Throws what resources/read throws for a URI this key may not read.
     */
    async versionOf(request: SurfaceRequest, uri: string): Promise<string> {
      if (uri.startsWith(workspaceScheme)) {
        const { path, workspace } = await readableFile(request, uri)
        const object = await workspace.storage.head(workspace.prefix + path)
        return object ? `etag:${object.etag}` : 'absent'
      }
      const surface = await sourceOfUri(request, uri)
      if (!surface?.readResource) throw missingResource(uri)
      const answer = bounded(await surface.readResource(uri, request.signal), uri)
      return `sha256:${await sha256Hex(JSON.stringify(answer.contents ?? answer))}`
    },

    async listPrompts(request: SurfaceRequest) {
      const prompts: JsonRecord[] = [
        {
          name: contextPrompt,
          title: 'toolport context',
          description:
            'The workspace, limits, tools and policies of this key, to put before a conversation (GET /v1/context).',
          arguments: [{ name: 'workspace', description: 'Workspace id; default: the one this request uses.' }],
        },
        {
          name: toolPrompt,
          title: 'toolport tool',
          description: 'One tool this key may call, explained: what it does, its effect, what it takes and answers.',
          arguments: [{ name: 'name', description: 'The tool name (completion lists them).', required: true }],
        },
      ]
      for (const surface of await sourcesOf(request.principal)) {
        const own = surface.prompts ? await surface.prompts(request.signal).catch(skipped(surface)) : []
        prompts.push(...own.filter((prompt) => !ownPrompts.has(String(prompt.name))))
      }
      return { prompts }
    },

    async getPrompt(request: SurfaceRequest, name: string, args: Record<string, string>): Promise<JsonRecord> {
      if (name === contextPrompt) {
        const workspace = parseWorkspace(args.workspace ?? request.workspaceId)
        const text = renderContext(await buildContext(deps.context, request.principal, workspace))
        return {
          description: `toolport context for the workspace ${workspace}`,
          messages: [{ role: 'user', content: { type: 'text', text } }],
        }
      }
      if (name === toolPrompt) return explainTool(request, args.name)
      const surface = (await sourcesOf(request.principal)).find(
        (candidate) => candidate.getPrompt && name.startsWith(`${candidate.source}_`),
      )
      if (!surface?.getPrompt) {
        throw new ToolError('not_found', `There is no prompt named ${JSON.stringify(name)}.`, {
          hint: 'prompts/list lists the prompts this key may get.',
        })
      }
      return bounded(await surface.getPrompt(name, args, request.signal), name)
    },

    /** Workspace paths for the file template, workspace ids for the context prompt, else the source's. */
    async complete(request: SurfaceRequest, params: JsonRecord): Promise<JsonRecord> {
      const ref = (params.ref ?? {}) as JsonRecord
      const argument = (params.argument ?? {}) as { name?: unknown; value?: unknown }
      const value = typeof argument.value === 'string' ? argument.value : ''
      if (ref.type === 'ref/resource' && ref.uri === workspaceTemplate && argument.name === 'path') {
        const workspace = String(((params.context as JsonRecord | undefined)?.arguments as JsonRecord)?.workspace ?? '')
        return completion(await completePaths(request, workspace || request.workspaceId, value))
      }
      if (ref.type === 'ref/prompt' && ref.name === contextPrompt) {
        return completion(argument.name === 'workspace' ? await completeWorkspaces(request, value) : [])
      }
      if (ref.type === 'ref/prompt' && ref.name === toolPrompt) {
        const names = (await catalog.view(request.principal)).entries.map((entry) => entry.name)
        return completion(argument.name === 'name' ? names.filter((name) => name.startsWith(value)) : [])
      }
      if (ref.type === 'ref/resource' && ref.uri === workspaceTemplate) return completion([])
      for (const surface of await sourcesOf(request.principal)) {
        if (!surface.complete) continue
        const ours =
          ref.type === 'ref/prompt'
            ? String(ref.name).startsWith(`${surface.source}_`)
            : (await listedBy(surface, request)).templates.some((template) => template.uriTemplate === ref.uri)
        if (ours) return surface.complete(params, request.signal)
      }
      return completion([])
    },
  }

  /**
   * A source's resource or prompt as the client gets it, within the size a workspace file may have (as
   * base64, with room for the JSON around it): a server cannot push more through toolport than a file.
   */
  function bounded(answer: JsonRecord, what: string): JsonRecord {
    const limit = Math.ceil((deps.context.limits.maxFileBytes * 4) / 3) + 64 * 1024
    if (JSON.stringify(answer).length <= limit) return answer
    throw new ToolError(
      'size_exceeded',
      `The MCP source answered ${JSON.stringify(what.slice(0, 200))} with more than toolport passes on.`,
      {
        hint: `A resource or prompt may carry at most ${deps.context.limits.maxFileBytes} bytes of content (TOOLPORT_MAX_FILE_BYTES); ask the source's operator.`,
      },
    )
  }

  /** The toolport_tool prompt: a tool the key may call, as the catalog lists it, in words and schemas. */
  async function explainTool(request: SurfaceRequest, name: string | undefined): Promise<JsonRecord> {
    if (!name) {
      throw new ToolError('validation', 'toolport_tool needs the argument name.', {
        hint: 'Pass the name of a tool tools/list shows; completion/complete lists them.',
        details: { field: 'name' },
      })
    }
    const entry = (await catalog.view(request.principal)).entries.find((candidate) => candidate.name === name)
    if (!entry) {
      throw new ToolError('not_found', `There is no tool named ${JSON.stringify(name.slice(0, 100))} for this key.`, {
        hint: 'tools/list lists the tools this key may call.',
      })
    }
    const listing = catalog.listing(entry)
    const text = [
      `The toolport tool ${listing.name} (${listing.title}; effect ${listing.effect}): ${listing.description}`,
      '',
      `Call it with arguments matching this JSON Schema:\n${JSON.stringify(listing.input_schema, null, 2)}`,
      '',
      `It answers (structured content) matching:\n${JSON.stringify(listing.output_schema, null, 2)}`,
    ].join('\n')
    return {
      description: `How to call ${listing.name}`,
      messages: [{ role: 'user', content: { type: 'text', text } }],
    }
  }

  /** A workspace URI's workspace and path, after the same checks as a read_file call of it. */
  async function readableFile(request: SurfaceRequest, uri: string) {
    const rest = uri.slice(workspaceScheme.length)
    const slash = rest.indexOf('/')
    if (slash <= 0) throw missingResource(uri)
    let path: string
    let workspaceId: string
    try {
      workspaceId = parseWorkspace(decodeURIComponent(rest.slice(0, slash)))
      path = normalizeWorkspacePath(
        rest
          .slice(slash + 1)
          .split('/')
          .map(decodeURIComponent)
          .join('/'),
      )
    } catch (error) {
      if (error instanceof URIError) throw missingResource(uri)
      throw error
    }
    await assertMayRead(request, workspaceId, path)
    return { path, workspace: createWorkspace(deps.context.storage, request.principal.tenant, workspaceId) }
  }

  /** The source whose listing or templates name `uri`, or undefined. */
  async function sourceOfUri(request: SurfaceRequest, uri: string): Promise<SourceSurface | undefined> {
    for (const surface of await sourcesOf(request.principal)) {
      if (!surface.resources || !surface.readResource) continue
      const { resources, templates } = await listedBy(surface, request)
      const listed = resources.some((resource) => resource.uri === uri)
      const templated = templates.some((template) => matchesTemplate(String(template.uriTemplate), uri))
      if (listed || templated) return surface
    }
    return undefined
  }

  async function readWorkspaceFile(request: SurfaceRequest, uri: string): Promise<JsonRecord> {
    const { path, workspace } = await readableFile(request, uri)
    const file = await workspace.readFile(path, deps.context.limits.maxFileBytes).catch((error: unknown) => {
      // A file that is not there is MCP's "resource not found"; a folder or a file too big stays a refusal.
      if (isToolError(error) && error.code === 'not_found') throw missingResource(uri)
      throw error
    })
    const mimeType = mimeTypeOf(path)
    const text = textOf(file.bytes, mimeType)
    return {
      contents: [text === undefined ? { uri, mimeType, blob: toBase64(file.bytes) } : { uri, mimeType, text }],
    }
  }

  async function completePaths(request: SurfaceRequest, workspaceId: string, prefix: string): Promise<string[]> {
    if (!(await isAllowed(request.principal, 'list_files'))) return []
    const workspace = createWorkspace(deps.context.storage, request.principal.tenant, parseWorkspace(workspaceId))
    const page = await workspace.storage.list(`${workspace.prefix}${prefix}`, { limit: pageSize })
    return page.objects.map((object) => object.key.slice(workspace.prefix.length))
  }

  async function completeWorkspaces(request: SurfaceRequest, prefix: string): Promise<string[]> {
    const root = createWorkspace(deps.context.storage, request.principal.tenant, request.workspaceId).prefix
    const tenantRoot = root.slice(0, root.slice(0, -1).lastIndexOf('/') + 1)
    const page = await deps.context.storage.list(`${tenantRoot}${prefix}`, { delimiter: '/', limit: pageSize })
    const found = page.prefixes.map((folder) => folder.slice(tenantRoot.length, -1))
    return [...new Set([request.workspaceId, ...found])].filter((id) => id.startsWith(prefix))
  }
}

export type Surface = ReturnType<typeof createSurface>

/**
 * A source's own listing without entries under toolport's workspace scheme: those URIs are read from
 * the workspace, never from a source, and a source listing them would only mislead.
 */
function notOurs(items: JsonRecord[], field: 'uri' | 'uriTemplate'): JsonRecord[] {
  return items.filter((item) => !String(item[field]).startsWith(workspaceScheme))
}

function completion(values: string[]): JsonRecord {
  const cut = values.slice(0, 100)
  return { completion: { values: cut, total: values.length, hasMore: values.length > cut.length } }
}

/** Text when the bytes are UTF-8 of a textual type (or of no known type), else undefined: a blob. */
function textOf(bytes: Uint8Array, mimeType: string): string | undefined {
  const textual =
    mimeType.startsWith('text/') ||
    /json|xml|yaml|javascript|typescript|csv|markdown|x-sh|toml/.test(mimeType) ||
    mimeType === 'application/octet-stream'
  if (!textual) return undefined
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

function missingResource(uri: string): ToolError {
  return new ToolError('not_found', `There is no resource ${JSON.stringify(uri.slice(0, 300))}.`, {
    hint: `resources/list and resources/templates/list show what this key may read; workspace files are ${workspaceTemplate}.`,
    details: { uri: uri.slice(0, 300) },
  })
}

/** Whether a URI fits an RFC 6570 template of simple `{var}` and `{+var}` expressions (what servers use). */
export function matchesTemplate(template: string, uri: string): boolean {
  const pattern = template
    .split(/(\{\+?[^}]+\})/)
    .map((part) => {
      if (/^\{\+/.test(part)) return '.+'
      if (/^\{/.test(part)) return '[^/?#]+'
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    })
    .join('')
  return new RegExp(`^${pattern}$`).test(uri)
}

/** A page position: the sources' resources come on the first page, the workspace's after. */
function parseCursor(cursor: string | undefined): { sources: boolean; files?: string } {
  if (cursor === undefined) return { sources: true }
  try {
    const decoded = JSON.parse(new TextDecoder().decode(fromBase64Url(cursor))) as { files?: unknown }
    if (typeof decoded.files === 'string') return { sources: false, files: decoded.files }
  } catch {}
  throw new ToolError('validation', 'The cursor is not one resources/list gave.', {
    hint: 'Pass back nextCursor from the previous page unchanged, or leave it out for the first page.',
    details: { field: 'cursor' },
  })
}

function makeCursor(files: string): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify({ files })))
}
