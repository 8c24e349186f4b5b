import { z } from 'zod'
import { type CatalogEntry, sourceEntry } from '../../catalog/entry'
import { ToolError } from '../../core/errors'
import { carrierHeaders, inSpan, type TraceCarrier } from '../../core/tracing'
import type { HttpClient } from '../../net/http'
import { defineTool } from '../../tools/tool'
import {
  checkDeclaredTools,
  DeclaredTool,
  declaredIdentity,
  Headers,
  MaxResponseBytes,
  maxToolsPerSource,
  resolveSecrets,
  SourceDescription,
  SourceId,
  TimeoutSeconds,
} from '../declared'
import type { SourceKind } from '../types'
import { outboundClient, type UpstreamCall, upstreamJson } from '../upstream'
import { declaredSchemas } from './declared-schemas'

/**
 * `http`: each tool POSTs its validated input to a worker, as plain JSON or as JSON-RPC 2.0 (the
 * reference's worker protocol: method per tool, params = the input).
 */
export const HttpManifest = z.strictObject({
  id: SourceId,
  kind: z.literal('http'),
  description: SourceDescription.optional(),
  url: z.url({ protocol: /^https?$/ }).max(2048),
  protocol: z.enum(['json', 'jsonrpc']).default('json'),
  headers: Headers.optional(),
  timeout_seconds: TimeoutSeconds.default(30),
  max_response_bytes: MaxResponseBytes,
  tools: z
    .array(
      DeclaredTool.extend({
        /** JSON-RPC method (default: the tool's name). */
        method: z.string().min(1).max(256).optional(),
        /** json protocol: a path appended to url (default: none). */
        path: z
          .string()
          .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@/%-]*$/, 'must be a URL path starting with "/"')
          .max(1024)
          .optional(),
      }),
    )
    .min(1)
    .max(maxToolsPerSource)
    .superRefine(checkDeclaredTools),
})
export type HttpManifest = z.output<typeof HttpManifest>

export const httpKind: SourceKind<HttpManifest> = {
  kind: 'http',
  async load(manifest, context) {
    const http = outboundClient(context.http)
    const headers = resolveSecrets(manifest.headers, context.secret, 'header')
    return { tools: manifest.tools.map((declared) => httpTool(manifest, declared, headers, http)) }
  },
}

function httpTool(
  manifest: HttpManifest,
  declared: HttpManifest['tools'][number],
  headers: Record<string, string>,
  http: HttpClient,
): CatalogEntry {
  const schemas = declaredSchemas(declared)
  const url = declared.path ? `${manifest.url.replace(/\/+$/, '')}${declared.path}` : manifest.url
  const method = declared.method ?? declared.name
  const requestOf = (
    input: unknown,
    call: { tenant: string; workspace: string; trace?: TraceCarrier },
  ): UpstreamCall['request'] => ({
    url,
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json',
      'x-toolport-tenant': call.tenant,
      'x-toolport-workspace': call.workspace,
      // The call's trace goes on to the source's upstream (W3C traceparent, tracestate) when tracing is on.
      ...carrierHeaders(call.trace),
    },
    body: JSON.stringify(
      manifest.protocol === 'jsonrpc' ? { jsonrpc: '2.0', id: crypto.randomUUID(), method, params: input } : input,
    ),
    // The manifest's headers (its secrets among them) never follow a redirect to another origin.
    secretHeaders: Object.keys(headers),
  })
  const tool = defineTool({
    ...declaredIdentity(declared),
    input: schemas.input.validator,
    output: schemas.output.validator,
    deadlineMs: () => manifest.timeout_seconds * 1000 + 5_000,
    async run(input, tool) {
      // The upstream request is a client span of the call; the upstream's parent is that span.
      const upstreamSpan = {
        'toolport.source': manifest.id,
        'rpc.method': manifest.protocol === 'jsonrpc' ? method : undefined,
      }
      const result = await inSpan(
        tool.span,
        `source ${manifest.id}`,
        upstreamSpan,
        (span) =>
          upstreamJson(http, {
            source: manifest.id,
            tool: declared.name,
            request: requestOf(input, {
              tenant: tool.workspace.tenant,
              workspace: tool.workspace.id,
              ...(span.recording ? { trace: span.carrier() } : {}),
            }),
            timeoutMs: manifest.timeout_seconds * 1000,
            maxBytes: manifest.max_response_bytes,
            signal: tool.signal,
          }),
        'client',
      )
      const value = manifest.protocol === 'jsonrpc' ? jsonRpcResult(result, manifest.id, declared.name) : result
      return schemas.check(value, tool.limits.maxResponseChars)
    },
    async dryRun(input, tool) {
      const request = requestOf(input, { tenant: tool.workspace.tenant, workspace: tool.workspace.id })
      return {
        request: { ...request, headers: maskHeaders(request.headers ?? {}, Object.keys(manifest.headers ?? {})) },
        address: await verdictOf(http, url),
      }
    },
  })
  return sourceEntry(manifest.id, tool, {
    schemas: { input: schemas.input.published, output: schemas.output.published },
  })
}

/** A JSON-RPC 2.0 response's result, or its error as a problem the model can read. */
// Built once: zod compiles an object schema on its first parse, which made a schema built per call
// most of an http source call's own CPU (--cpu-prof of bench/sources.ts).
const JsonRpcResponse = z.object({
  jsonrpc: z.literal('2.0'),
  result: z.unknown().optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
})

export function jsonRpcResult(response: unknown, source: string, tool: string): unknown {
  const envelope = JsonRpcResponse.safeParse(response)
  if (!envelope.success || (envelope.data.result === undefined && !envelope.data.error)) {
    throw new ToolError(
      'connection',
      `The worker of ${source} answered ${tool} with something that is not a JSON-RPC 2.0 response.`,
      {
        hint: 'The source is misconfigured or its worker is broken; tell the operator, and do not retry unchanged.',
        details: { source },
      },
    )
  }
  const { error, result } = envelope.data
  if (!error) return result
  // Invalid params is the caller's to fix; any other error is the worker's.
  const code = error.code === -32602 ? 'validation' : 'connection'
  throw new ToolError(code, `${tool} failed in its worker: ${error.message.slice(0, 500)}`, {
    hint:
      code === 'validation'
        ? 'Fix the input as the message says and call again.'
        : 'The worker reported an error; try again later or call with different input.',
    details: { source, upstream_error_code: error.code },
  })
}

/** Headers as a dry run shows them: the values of the manifest's (secret) headers hidden. */
export function maskHeaders(headers: Record<string, string>, secretNames: readonly string[]): Record<string, string> {
  const secret = new Set(secretNames.map((name) => name.toLowerCase()))
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, secret.has(name.toLowerCase()) ? '(set)' : value]),
  )
}

/** The outbound address check for a URL, as a dry run reports it: sends nothing. */
export async function verdictOf(http: HttpClient, url: string): Promise<{ allowed: boolean; reason?: string }> {
  try {
    await http.check(url)
    return { allowed: true }
  } catch (error) {
    return { allowed: false, reason: error instanceof Error ? error.message : String(error) }
  }
}
