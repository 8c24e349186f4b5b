import { type CatalogEntry, type SourceSurface, sourceEntry } from '../../catalog/entry'
import type { Effect as EffectName } from '../../core/effects'
import { carrierHeaders, inSpan } from '../../core/tracing'
import { defineTool } from '../../tools/tool'
import { maxToolsPerSource, toolNamePattern } from '../declared'
import { publishable } from '../published-text'
import { compileSchema } from '../schema-compiler'
import type { LoadedSource, SourceKind } from '../types'
import { resultCheck } from './declared-schemas'
import { type Connection, createConnection } from './mcp-client'
import { listAllTools } from './mcp-connection'
import { connectTimeoutMs, connectTimeoutOf, type McpManifest } from './mcp-manifest'
import { failedCall, McpTextOutput, mcpTextOutputSchema, textOutputOf } from './mcp-results'
import { mcpSurface } from './mcp-surface'

/** `mcp`: an MCP server's tools as toolport tools (the manifest is in mcp-manifest.ts). */
export const mcpKind: SourceKind<McpManifest> = {
  kind: 'mcp',
  async load(manifest, context) {
    const connection = createConnection(manifest, context)
    try {
      const client = await connection.client()
      const { tools: listed, skipped } = await listAllTools(client, context.signal, connectTimeoutOf(manifest))
      const offered = client.getServerCapabilities() ?? {}
      const surface = mcpSurface(
        manifest.id,
        connection,
        { resources: !!offered.resources, prompts: !!offered.prompts, completions: !!offered.completions },
        manifest.timeout_seconds * 1000,
      )
      const wanted = manifest.tools ? new Set(manifest.tools) : undefined
      const tools: CatalogEntry[] = []
      const notes: string[] = [...skipped]
      for (const upstream of listed) {
        if (wanted && !wanted.has(upstream.name)) continue
        const made = sourceTool(manifest, upstream, connection, surface)
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
      const note = connection.note()
      throw note ? new Error(`${error instanceof Error ? error.message : String(error)}${note}`) : error
    }
  },
}

type UpstreamTool = Awaited<ReturnType<typeof listAllTools>>['tools'][number]

/** One of the server's tools as a toolport tool, or why it was skipped. */
function sourceTool(
  manifest: McpManifest,
  upstream: UpstreamTool,
  connection: Connection,
  surface: SourceSurface,
): CatalogEntry | string {
  const name = `${manifest.id}_${upstream.name}`
  if (!toolNamePattern.test(name))
    return `skipped ${JSON.stringify(upstream.name.slice(0, 80))}: ${name.slice(0, 80)} is not a valid tool name`
  let input: ReturnType<typeof compileSchema>
  let output: ReturnType<typeof compileSchema> | undefined
  try {
    input = compileSchema(upstream.inputSchema, 'inputSchema', { root: 'object', text: 'clean' })
    output = upstream.outputSchema
      ? compileSchema(upstream.outputSchema, 'outputSchema', { root: 'object', text: 'clean' })
      : undefined
  } catch (error) {
    return `skipped ${upstream.name}: ${(error as Error).message}`
  }
  // The output schema compiled above, not a second time.
  const check = output ? resultCheck(name, output) : undefined
  const timeoutMs = manifest.timeout_seconds * 1000
  const tool = defineTool({
    name,
    // The server's text, cleaned of what platforms may refuse in a tool list (published-text.ts).
    title: publishable(upstream.title ?? upstream.annotations?.title ?? upstream.name, 'line').slice(0, 100),
    description: publishable(upstream.description ?? upstream.name, 'text').slice(0, 1024),
    effect: manifest.effects?.[upstream.name] ?? effectOf(upstream.annotations),
    // The server's own hints, where it sets them, pass through to toolport's MCP clients.
    hints: {
      ...(typeof upstream.annotations?.destructiveHint === 'boolean'
        ? { destructive: upstream.annotations.destructiveHint }
        : {}),
      ...(typeof upstream.annotations?.idempotentHint === 'boolean'
        ? { idempotent: upstream.annotations.idempotentHint }
        : {}),
      ...(typeof upstream.annotations?.openWorldHint === 'boolean'
        ? { openWorld: upstream.annotations.openWorldHint }
        : {}),
    },
    input: input.validator,
    output: output ? output.validator : McpTextOutput,
    // The server's own content may be files: saved to the workspace, handed back as links.
    uses: ['http', 'links'],
    deadlineMs: () => timeoutMs + connectTimeoutMs,
    // Its progress and log messages reach a client that listens, and its server may ask that client.
    relaysClient: true,
    async run(args, tool) {
      const relay = { emit: tool.emit, client: tool.client }
      // MCP carries W3C Trace Context in the request's _meta: the upstream's parent is this client span.
      const result = await inSpan(
        tool.span,
        `source ${manifest.id}`,
        { 'toolport.source': manifest.id, 'gen_ai.tool.name': upstream.name },
        (span) =>
          connection.call(
            upstream.name,
            args as Record<string, unknown>,
            tool.signal,
            timeoutMs,
            relay,
            span.recording ? carrierHeaders(span.carrier()) : undefined,
          ),
        'client',
      )
      // The server's own result goes to an MCP client unchanged when it fits the response budget; the
      // output below is still made and checked (REST, jobs, and the outputSchema's promise).
      const native = tool.client && fitsBudget(result, tool.limits.maxResponseChars)
      if (result.isError === true) {
        if (native) tool.client?.answer(result as Record<string, unknown>)
        throw failedCall(result, manifest.id, name)
      }
      const output = check
        ? check(result.structuredContent, tool.limits.maxResponseChars)
        : await textOutputOf(result, tool, { saveFiles: !native })
      // toolport lists every tool with an output schema, and MCP clients hold a result to it: a server
      // result without structured content gets the output (which matches it) as its structured content.
      if (native) tool.client?.answer({ ...result, structuredContent: result.structuredContent ?? output })
      return output
    },
    async dryRun(args) {
      return {
        server: manifest.url ?? `stdio: ${manifest.command?.join(' ')}`,
        tool: upstream.name,
        arguments: args,
      }
    },
  })
  return sourceEntry(manifest.id, tool, {
    sourceName: upstream.name,
    schemas: { input: input.published, output: output ? output.published : mcpTextOutputSchema },
    surface,
  })
}

/** Whether a result, as JSON, fits the response budget a client is answered within. */
function fitsBudget(result: unknown, maxResponseChars: number): boolean {
  return JSON.stringify(result).length <= maxResponseChars
}

/** MCP's hints as toolport's effect; only hints the server set count (the spec's defaults are guesses). */
function effectOf(annotations: UpstreamTool['annotations']): EffectName {
  if (annotations?.readOnlyHint === true) return 'read'
  if (annotations?.destructiveHint === true) return 'destructive'
  if (annotations?.openWorldHint === true) return 'external'
  return 'write'
}
