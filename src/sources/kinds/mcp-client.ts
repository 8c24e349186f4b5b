import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { JSONRPCMessageSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { ToolError } from '../../core/errors'
import { resolveSecrets } from '../declared'
import type { SourceLoadContext } from '../types'
import { fetchThrough, ProcessTransport } from './mcp-connection'
import { connectTimeoutOf, type McpManifest } from './mcp-manifest'

type CallResult = { content?: unknown; structuredContent?: unknown; isError?: unknown }

export interface Connection {
  client(): Promise<Client>
  /** What the server said on its way out (stdio: why the connection ended, its stderr tail). */
  note(): string
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<CallResult>
  onToolsChanged(listener: () => void): void
  close(): Promise<void>
}

/**
 * The SDK client checks each structuredContent against the server's outputSchema with Ajv, on the
 * service's thread, patterns included: a server whose schema says `"pattern": "^(a+)+$"` froze every
 * tenant's calls for a minute (an outside audit). toolport checks the result itself with the schema it
 * compiled (declared-schemas.ts resultCheck), which never runs a server's pattern, so the client's own
 * check lets every result through (and compiles nothing).
 */
const resultsUnchecked: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined })
  },
}

/**
 * The source's one connection to its server, opened on demand: kept warm with an idle timer where the
 * runtime allows, opened per call where it does not (Lambda), and opened again after the server died.
 */
export function createConnection(manifest: McpManifest, context: SourceLoadContext): Connection {
  let current: Promise<{ client: Client; transport: Transport }> | undefined
  let lastTransport: Transport | undefined
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  let busy = 0
  const listeners: Array<() => void> = []

  async function open(): Promise<{ client: Client; transport: Transport }> {
    const client = new Client(
      { name: 'toolport', version: '0.1.0' },
      { capabilities: {}, jsonSchemaValidator: resultsUnchecked },
    )
    const transport = await transportFor(manifest, context)
    lastTransport = transport
    const closed = () => {
      if (current === opened) current = undefined
    }
    transport.onclose = closed
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      for (const listener of listeners) listener()
    })
    await client.connect(transport, { timeout: connectTimeoutOf(manifest), signal: context.signal })
    return { client, transport }
  }
  let opened: typeof current
  const connect = () => {
    if (!current) {
      opened = open()
      current = opened
      current.catch(() => {
        if (current === opened) current = undefined
      })
    }
    return current
  }
  const close = async () => {
    clearTimeout(idleTimer)
    const closing = current
    current = undefined
    await closing?.then(({ client }) => client.close()).catch(() => {})
  }
  const scheduleIdle = () => {
    clearTimeout(idleTimer)
    if (manifest.command && context.keepWarm && busy === 0) {
      idleTimer = setTimeout(() => void close(), manifest.idle_seconds * 1000)
      idleTimer.unref?.()
    }
  }
  return {
    client: async () => (await connect()).client,
    note: () => (lastTransport instanceof ProcessTransport ? lastTransport.problemNote() : ''),
    onToolsChanged: (listener) => listeners.push(listener),
    close,
    async call(tool, args, signal, timeoutMs) {
      busy++
      clearTimeout(idleTimer)
      try {
        const { client, transport } = await connect()
        try {
          const result = await client.callTool({ name: tool, arguments: args }, undefined, {
            signal,
            timeout: timeoutMs,
            resetTimeoutOnProgress: true,
          })
          // A server on the 2024 protocol may answer { toolResult }: its content is that value, as text.
          return 'toolResult' in result
            ? { content: [{ type: 'text', text: JSON.stringify(result.toolResult) }] }
            : (result as CallResult)
        } catch (error) {
          throw callError(error, manifest.id, tool, transport)
        }
      } finally {
        busy--
        if (!context.keepWarm) await close()
        else scheduleIdle()
      }
    },
  }
}

async function transportFor(manifest: McpManifest, context: SourceLoadContext): Promise<Transport> {
  if (manifest.url) {
    if (!context.http) throw new Error('this runtime has no outbound HTTP client')
    const headers = resolveSecrets(manifest.headers, context.secret, 'header')
    return new StreamableHTTPClientTransport(new URL(manifest.url), {
      fetch: fetchThrough(context.http, manifest.timeout_seconds * 1000 + 5_000),
      requestInit: { headers },
    })
  }
  if (!context.processes) throw new Error('this runtime cannot start stdio MCP servers (no sandbox)')
  const process = await context.processes.start({
    argv: manifest.command as string[],
    env: resolveSecrets(manifest.env, context.secret, 'variable'),
    image: manifest.image,
    mounts: manifest.mounts ?? [],
    label: `${context.owner.kind === 'tenant' ? context.owner.tenant : 'operator'}/${manifest.id}`,
  })
  return new ProcessTransport(process, (line) => JSONRPCMessageSchema.parse(JSON.parse(line)))
}

/** A failed call as the problem a caller sees: 504 for the call's own timeout, else 502 naming the server's fault. */
function callError(error: unknown, source: string, tool: string, transport: Transport): ToolError {
  if (error instanceof ToolError) return error
  const message = error instanceof Error ? error.message : String(error)
  const stderr = transport instanceof ProcessTransport ? transport.problemNote() : ''
  if (/timed out|timeout/i.test(message)) {
    return new ToolError('timeout', `${tool} (MCP source ${source}) did not answer in time.`, {
      hint: 'Try a smaller task, or call with ?async=true so it runs as a job.',
      details: { source },
    })
  }
  return new ToolError('connection', `${tool} (MCP source ${source}) failed: ${message.slice(0, 300)}${stderr}`, {
    hint: 'The MCP server misbehaved or is down; try again, and tell the operator if it persists.',
    details: { source },
  })
}
