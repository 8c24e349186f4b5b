import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { ToolError } from '../../core/errors'
import type { ClientChannel, ToolEvent } from '../../tools/tool'
import { resolveSecrets } from '../declared'
import type { SourceLoadContext } from '../types'
import { fetchThrough } from './mcp-connection'
import { connectTimeoutOf, type McpManifest } from './mcp-manifest'
import { onDemand } from './on-demand'
import { ProcessTransport } from './process-transport'

type CallResult = { content?: unknown; structuredContent?: unknown; isError?: unknown }

/** Where one call's progress, log messages and the server's requests go: the calling client's. */
export interface CallRelay {
  emit: (event: ToolEvent) => void
  client: ClientChannel | undefined
}

export interface Connection {
  client(): Promise<Client>
  /** What the server said on its way out (stdio: why the connection ended, its stderr tail). */
  note(): string
  call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    relay?: CallRelay,
    /** The request's `_meta` (the call's W3C trace context, when tracing is on). */
    meta?: Record<string, string>,
  ): Promise<CallResult>
  /** Any other request (resources, prompts, completions), on the same connection and idle rules as a call. */
  use<T>(work: (client: Client) => Promise<T>): Promise<T>
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
  let lastTransport: Transport | undefined
  const listeners: Array<() => void> = []
  // The calls in flight on this connection, with where their messages go.
  const inflight = new Set<CallRelay>()

  /**
   * The call a server's log message or request belongs to. MCP messages over one connection carry no
   * reference to the call they serve, so only a lone call in flight can be named: with two (an
   * operator's source serves every tenant on one connection) a message could reach another tenant's
   * client, so log messages are dropped and requests refused.
   */
  function relayTarget(): CallRelay | undefined {
    if (inflight.size !== 1) return undefined
    return inflight.values().next().value
  }

  async function askClient(
    capability: 'sampling' | 'elicitation',
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<never> {
    const target = relayTarget()
    if (!target?.client) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        inflight.size > 1
          ? `toolport cannot tell which of ${inflight.size} calls in flight this ${method} belongs to, so it is refused.`
          : `The client calling through toolport cannot answer ${method} here (its transport has no channel for it).`,
      )
    }
    if (!(capability in target.client.capabilities)) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `The client calling through toolport does not support ${capability}, so ${method} is refused.`,
      )
    }
    return (await target.client.request(method, params, signal)) as never
  }

  async function open(lost: () => void): Promise<{ client: Client; transport: Transport }> {
    // Sampling and elicitation are declared so the server may ask: each request is relayed to the
    // client of the call it belongs to, or refused when that client cannot answer (relayTarget).
    const client = new Client(
      { name: 'toolport', version: '0.1.0' },
      { capabilities: { sampling: {}, elicitation: {} }, jsonSchemaValidator: resultsUnchecked },
    )
    const transport = await transportFor(manifest, context)
    lastTransport = transport
    transport.onclose = lost
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      for (const listener of listeners) listener()
    })
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const { level, logger, data } = notification.params
      relayTarget()?.emit({ type: 'log', level, ...(logger !== undefined ? { logger } : {}), data })
    })
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
      askClient('sampling', 'sampling/createMessage', request.params, extra.signal),
    )
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      askClient('elicitation', 'elicitation/create', request.params, extra.signal),
    )
    await client.connect(transport, { timeout: connectTimeoutOf(manifest), signal: context.signal })
    return { client, transport }
  }
  // A stdio server is stopped when idle; a connection over HTTP holds nothing open between requests.
  const connection = onDemand({
    open,
    close: ({ client }) => client.close(),
    keepWarm: context.keepWarm,
    idleMs: manifest.command ? manifest.idle_seconds * 1000 : undefined,
  })
  const connect = connection.get
  const close = connection.close
  const use = <T>(work: (client: Client, transport: Transport) => Promise<T>): Promise<T> =>
    connection.use(({ client, transport }) => work(client, transport))

  return {
    client: async () => (await connect()).client,
    note: () => (lastTransport instanceof ProcessTransport ? lastTransport.problemNote() : ''),
    onToolsChanged: (listener) => listeners.push(listener),
    close,
    async call(tool, args, signal, timeoutMs, relay, meta) {
      return use(async (client, transport) => {
        if (relay) inflight.add(relay)
        try {
          const request = { name: tool, arguments: args, ...(meta && Object.keys(meta).length ? { _meta: meta } : {}) }
          const result = await client.callTool(request, undefined, {
            signal,
            timeout: timeoutMs,
            resetTimeoutOnProgress: true,
            // A progress token is sent only where the progress has somewhere to go.
            ...(relay
              ? {
                  onprogress: ({ progress, total, message }) =>
                    relay.emit({
                      type: 'progress',
                      progress,
                      ...(total !== undefined ? { total } : {}),
                      ...(message !== undefined ? { message } : {}),
                    }),
                }
              : {}),
          })
          // A server on the 2024 protocol may answer { toolResult }: its content is that value, as text.
          return 'toolResult' in result
            ? { content: [{ type: 'text', text: JSON.stringify(result.toolResult) }] }
            : (result as CallResult)
        } catch (error) {
          throw callError(error, manifest.id, tool, transport)
        } finally {
          if (relay) inflight.delete(relay)
        }
      })
    },
    use: (work) => use((client) => work(client)),
  }
}

async function transportFor(manifest: McpManifest, context: SourceLoadContext): Promise<Transport> {
  if (manifest.url) {
    if (!context.http) throw new Error('this runtime has no outbound HTTP client')
    const headers = resolveSecrets(manifest.headers, context.secret, 'header')
    return new StreamableHTTPClientTransport(new URL(manifest.url), {
      fetch: fetchThrough(context.http, manifest.timeout_seconds * 1000 + 5_000, Object.keys(headers)),
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
