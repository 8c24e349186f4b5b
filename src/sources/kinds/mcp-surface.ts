import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { JsonRecord, SourceSurface } from '../../catalog/entry'
import { ToolError } from '../../core/errors'
import type { Connection } from './mcp-client'

/** Most resources, templates or prompts listed of one source: a server that lists a million is cut here. */
const maxListed = 1_000

/**
 * An MCP source's resources, prompts and completions, passed through live: every request goes to the
 * server on the source's one connection (the same sandbox, address rules and idle timer as its
 * tools). Prompt names get the source's prefix, like its tools; URIs stay the server's own.
 */
export function mcpSurface(
  source: string,
  connection: Connection,
  offered: { resources: boolean; prompts: boolean; completions: boolean },
  timeoutMs: number,
): SourceSurface {
  const prefix = `${source}_`
  const options = (signal: AbortSignal) => ({ signal, timeout: timeoutMs })
  const upstreamName = (name: string) => {
    if (!name.startsWith(prefix)) throw unknownPrompt(name)
    return name.slice(prefix.length)
  }
  const surface: { -readonly [K in keyof SourceSurface]: SourceSurface[K] } = { source }
  // Every request is the server's: its failures become toolport's problems naming the source.
  const ask = <T>(work: (client: Client) => Promise<T>, uri?: string) =>
    connection.use(work).catch((error: unknown) => {
      throw upstreamError(error, source, uri)
    })
  if (offered.resources) {
    surface.resources = (signal) =>
      ask(async (client) => ({
        resources: await pages(client, 'resources/list', 'resources', signal, timeoutMs),
        templates: await pages(client, 'resources/templates/list', 'resourceTemplates', signal, timeoutMs).catch(
          // A server with resources but no templates may answer templates/list with "method not found".
          () => [],
        ),
      }))
    surface.readResource = (uri, signal) =>
      ask(async (client) => (await client.readResource({ uri }, options(signal))) as JsonRecord, uri)
  }
  if (offered.prompts) {
    surface.prompts = (signal) =>
      ask(async (client) =>
        (await pages(client, 'prompts/list', 'prompts', signal, timeoutMs)).map((prompt) => ({
          ...prompt,
          name: `${prefix}${String(prompt.name)}`,
        })),
      )
    surface.getPrompt = (name, args, signal) => {
      const own = upstreamName(name)
      return ask(
        async (client) => (await client.getPrompt({ name: own, arguments: args }, options(signal))) as JsonRecord,
      )
    }
  }
  if (offered.completions) {
    surface.complete = (params, signal) => {
      const ref = params.ref as JsonRecord
      const upstreamRef = ref.type === 'ref/prompt' ? { ...ref, name: upstreamName(String(ref.name)) } : ref
      return ask(
        async (client) =>
          (await client.complete({ ...params, ref: upstreamRef } as never, options(signal))) as JsonRecord,
      )
    }
  }
  return surface
}

type ListMethod = 'resources/list' | 'resources/templates/list' | 'prompts/list'

/** Every page of a list, up to maxListed items: a server's cursor loop is not followed forever. */
async function pages(
  client: Client,
  method: ListMethod,
  field: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<JsonRecord[]> {
  const items: JsonRecord[] = []
  let cursor: string | undefined
  for (let page = 0; page < 20 && items.length < maxListed; page++) {
    const params = cursor ? { cursor } : {}
    const options = { signal, timeout: timeoutMs }
    const answer =
      method === 'resources/list'
        ? await client.listResources(params, options)
        : method === 'prompts/list'
          ? await client.listPrompts(params, options)
          : await client.listResourceTemplates(params, options)
    const listed = (answer as JsonRecord)[field]
    if (Array.isArray(listed)) items.push(...(listed as JsonRecord[]))
    cursor = typeof answer.nextCursor === 'string' && answer.nextCursor ? answer.nextCursor : undefined
    if (!cursor) break
  }
  return items.slice(0, maxListed)
}

/**
 * A source server's failure as a problem: a resource it does not have is not found (MCP's -32002, or
 * the -32602 servers also use), its refusal of the request is a validation error with its words, a
 * timeout is a timeout, anything else a connection problem. Its own error never passes as toolport's.
 */
function upstreamError(error: unknown, source: string, uri: string | undefined): ToolError {
  if (error instanceof ToolError) return error
  const code = (error as { code?: unknown } | null)?.code
  const message = (error instanceof Error ? error.message : String(error)).slice(0, 300)
  if (uri !== undefined && (code === -32002 || code === -32602)) {
    return new ToolError('not_found', `There is no resource ${JSON.stringify(uri.slice(0, 300))}.`, {
      hint: `The MCP source ${source} answered: ${message}`,
      details: { uri: uri.slice(0, 300), source },
    })
  }
  if (code === -32001 || /timed out|timeout/i.test(message)) {
    return new ToolError('timeout', `The MCP source ${source} did not answer in time.`, {
      hint: 'Try again later; tell the operator if it persists.',
      details: { source },
    })
  }
  if (code === -32602 || code === -32600) {
    return new ToolError('validation', `The MCP source ${source} refused the request: ${message}`, {
      hint: 'Check the name and arguments against prompts/list or resources/templates/list.',
      details: { source },
    })
  }
  return new ToolError('connection', `The MCP source ${source} failed: ${message}`, {
    hint: 'The MCP server misbehaved or is down; try again, and tell the operator if it persists.',
    details: { source },
  })
}

function unknownPrompt(name: string): ToolError {
  return new ToolError('not_found', `There is no prompt named ${JSON.stringify(name)}.`, {
    hint: 'prompts/list lists the prompts this key may get.',
  })
}
