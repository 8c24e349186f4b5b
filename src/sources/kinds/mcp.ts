import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { JSONRPCMessageSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { Effect as EffectName } from '../../core/effects'
import { ToolError } from '../../core/errors'
import { defineTool, type Tool } from '../../tools/tool'
import {
  Effect,
  Headers,
  maxToolsPerSource,
  resolveSecrets,
  SecretName,
  SecretValue,
  SourceId,
  TimeoutSeconds,
  toolNamePattern,
} from '../declared'
import { compileSchema } from '../schema-compiler'
import type { LoadedSource, SourceKind, SourceLoadContext } from '../types'
import { declaredSchemas } from './declared-schemas'
import { fetchThrough, listAllTools, ProcessTransport } from './mcp-connection'
import { failedCall, McpTextOutput, mcpTextOutputSchema, textOutputOf } from './mcp-results'

const absolutePath = z
  .string()
  .regex(/^\/[^\0]*$/, 'must be an absolute path')
  .max(1024)

/** `mcp`: an MCP server at a Streamable HTTP `url`, or started from `command` inside the sandbox (stdio). */
export const McpManifest = z
  .strictObject({
    id: SourceId,
    kind: z.literal('mcp'),
    description: z.string().max(1024).optional(),
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    headers: Headers.optional(),
    /** argv of a stdio server, run in the sandbox with no network. */
    command: z.array(z.string().min(1).max(4096)).min(1).max(64).optional(),
    env: z.record(SecretName, SecretValue).optional(),
    /** Container image for the stdio server (container executor only). */
    image: z.string().min(1).max(255).optional(),
    /** Host folders the stdio server sees read-only (operator sources only), e.g. its installed code. */
    mounts: z
      .array(z.strictObject({ host: absolutePath, sandbox: absolutePath }))
      .max(8)
      .optional(),
    /** Only these of the server's tools (by the server's names). */
    tools: z.array(z.string().min(1).max(128)).min(1).max(maxToolsPerSource).optional(),
    /** Effect per tool (server's name), instead of the one its annotations imply. */
    effects: z.record(z.string().min(1).max(128), Effect).optional(),
    timeout_seconds: TimeoutSeconds.default(60),
    /** A stdio server idle this long is stopped, and started again by the next call. */
    idle_seconds: z.number().int().min(5).max(86_400).default(300),
  })
  .refine((manifest) => (manifest.url === undefined) !== (manifest.command === undefined), {
    message: 'give either url (a Streamable HTTP server) or command (a stdio server), not both',
    path: ['url'],
  })
export type McpManifest = z.output<typeof McpManifest>

// Initialize and tools/list must not hold a source in "loading" for long.
const connectTimeoutMs = 15_000

/** A source's own timeout bounds its connect too, when it is shorter. */
function connectTimeoutOf(manifest: McpManifest): number {
  return Math.min(connectTimeoutMs, manifest.timeout_seconds * 1000)
}

export const mcpKind: SourceKind<McpManifest> = {
  kind: 'mcp',
  async load(manifest, context) {
    const connection = createConnection(manifest, context)
    try {
      const client = await connection.client()
      const listed = await listAllTools(client, context.signal, connectTimeoutOf(manifest))
      const wanted = manifest.tools ? new Set(manifest.tools) : undefined
      const tools: Tool[] = []
      const notes: string[] = []
      for (const upstream of listed) {
        if (wanted && !wanted.has(upstream.name)) continue
        const made = sourceTool(manifest, upstream, connection)
        if (typeof made === 'string') notes.push(made)
        else tools.push(made)
      }
      if (tools.length > maxToolsPerSource)
        throw new Error(`the server lists ${tools.length} tools; at most ${maxToolsPerSource} (name some in tools)`)
      const loaded: LoadedSource = {
        tools,
        close: () => connection.close(),
        onChange: (listener) => connection.onToolsChanged(listener),
      }
      if (notes.length) loaded.notes = notes
      // Per-call servers (no warm processes) start again for each call.
      if (!context.keepWarm) await connection.close()
      return loaded
    } catch (error) {
      await connection.close()
      throw error
    }
  },
}

type UpstreamTool = Awaited<ReturnType<typeof listAllTools>>[number]

/** One of the server's tools as a toolport tool, or why it was skipped. */
function sourceTool(manifest: McpManifest, upstream: UpstreamTool, connection: Connection): Tool | string {
  const name = `${manifest.id}_${upstream.name}`
  if (!toolNamePattern.test(name))
    return `skipped ${JSON.stringify(upstream.name.slice(0, 80))}: ${name.slice(0, 80)} is not a valid tool name`
  let input: ReturnType<typeof compileSchema>
  let output: ReturnType<typeof compileSchema> | undefined
  try {
    input = compileSchema(upstream.inputSchema, 'inputSchema', { root: 'object' })
    output = upstream.outputSchema
      ? compileSchema(upstream.outputSchema, 'outputSchema', { root: 'object' })
      : undefined
  } catch (error) {
    return `skipped ${upstream.name}: ${(error as Error).message}`
  }
  const checked = output
    ? declaredSchemas({ name, input_schema: upstream.inputSchema, output_schema: upstream.outputSchema })
    : undefined
  const timeoutMs = manifest.timeout_seconds * 1000
  return defineTool({
    name,
    id: `${manifest.id}:${upstream.name}`,
    source: manifest.id,
    title: (upstream.title ?? upstream.annotations?.title ?? upstream.name).slice(0, 100),
    description: (upstream.description ?? upstream.name).slice(0, 1024),
    effect: manifest.effects?.[upstream.name] ?? effectOf(upstream.annotations),
    input: input.validator,
    output: output ? output.validator : McpTextOutput,
    schemas: { input: input.published, output: output ? output.published : mcpTextOutputSchema },
    deadlineMs: () => timeoutMs + connectTimeoutMs,
    async run(args, tool) {
      const result = await connection.call(upstream.name, args as Record<string, unknown>, tool.signal, timeoutMs)
      if (result.isError === true) throw failedCall(result, manifest.id, name)
      if (checked) return checked.check(result.structuredContent, tool.limits.maxResponseChars)
      return textOutputOf(result, tool)
    },
    async dryRun(args) {
      return {
        server: manifest.url ?? `stdio: ${manifest.command?.join(' ')}`,
        tool: upstream.name,
        arguments: args,
      }
    },
  })
}

/** MCP's hints as toolport's effect; only hints the server set count (the spec's defaults are guesses). */
function effectOf(annotations: UpstreamTool['annotations']): EffectName {
  if (annotations?.readOnlyHint === true) return 'read'
  if (annotations?.destructiveHint === true) return 'destructive'
  if (annotations?.openWorldHint === true) return 'external'
  return 'write'
}

type CallResult = { content?: unknown; structuredContent?: unknown; isError?: unknown }

interface Connection {
  client(): Promise<Client>
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<CallResult>
  onToolsChanged(listener: () => void): void
  close(): Promise<void>
}

/**
 * The source's one connection to its server, opened on demand: kept warm with an idle timer where the
 * runtime allows, opened per call where it does not (Lambda), and opened again after the server died.
 */
function createConnection(manifest: McpManifest, context: SourceLoadContext): Connection {
  let current: Promise<{ client: Client; transport: Transport }> | undefined
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  let busy = 0
  const listeners: Array<() => void> = []

  async function open(): Promise<{ client: Client; transport: Transport }> {
    const client = new Client({ name: 'toolport', version: '0.1.0' }, { capabilities: {} })
    const transport = await transportFor(manifest, context)
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
