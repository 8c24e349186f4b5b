import { z } from 'zod'
import { type CatalogEntry, sourceEntry } from '../../catalog/entry'
import { ToolError } from '../../core/errors'
import { carrierHeaders, inSpan } from '../../core/tracing'
import type { HttpClient } from '../../net/http'
import { defineTool } from '../../tools/tool'
import {
  Effect,
  Headers,
  MaxResponseBytes,
  maxToolsPerSource,
  resolveSecrets,
  SourceDescription,
  SourceId,
  TimeoutSeconds,
  ToolName,
} from '../declared'
import type { JsonSchema } from '../schema-compiler'
import type { SourceKind } from '../types'
import { outboundClient, upstreamJson } from '../upstream'
import { parseYaml } from '../yaml'
import { declaredSchemas } from './declared-schemas'
import { maskHeaders, verdictOf } from './http'
import { type OperationPlan, planOperations } from './openapi-operations'

// Largest OpenAPI document a source may name; big public APIs are a few MB.
const maxDocumentBytes = 8 * 1024 * 1024

/** `openapi`: each operation of an OpenAPI 3.0 or 3.1 document (JSON or YAML) becomes a tool. */
export const OpenApiManifest = z
  .strictObject({
    id: SourceId,
    kind: z.literal('openapi'),
    description: SourceDescription.optional(),
    /** Where the document is fetched from (JSON or YAML) … */
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    /** … or the document itself. */
    document: z.record(z.string(), z.unknown()).optional(),
    /** The API's base URL; default: the document's first server (relative to its URL). */
    base_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    headers: Headers.optional(),
    /** Only these operationIds become tools (default: all). */
    operations: z.array(ToolName).min(1).max(maxToolsPerSource).optional(),
    /** Effect per operationId; default: GET read, DELETE destructive, others write (or x-toolport-effect). */
    effects: z.record(ToolName, Effect).optional(),
    timeout_seconds: TimeoutSeconds.default(30),
    max_response_bytes: MaxResponseBytes,
  })
  .refine((manifest) => (manifest.url === undefined) !== (manifest.document === undefined), {
    message: 'give either url (where to fetch the document) or document (the document itself), not both',
    path: ['url'],
  })
export type OpenApiManifest = z.output<typeof OpenApiManifest>

export const openApiKind: SourceKind<OpenApiManifest> = {
  kind: 'openapi',
  async load(manifest, context) {
    const http = outboundClient(context.http)
    const document = manifest.document ?? (await fetchDocument(http, manifest.url as string, context.signal))
    const version = String(document.openapi ?? document.swagger ?? '')
    if (!/^3\.[01]\./.test(version)) {
      throw new Error(`the document is not OpenAPI 3.0 or 3.1 (openapi: ${JSON.stringify(version.slice(0, 20))})`)
    }
    const baseUrl = manifest.base_url ?? serverUrl(document, manifest.url)
    if (!baseUrl) throw new Error('the document names no server; set base_url in the manifest')
    const headers = resolveSecrets(manifest.headers, context.secret, 'header')
    const { plans, skipped } = planOperations(document, { only: manifest.operations, effects: manifest.effects })
    if (plans.length === 0)
      throw new Error(
        `the document has no usable operations${skipped.length ? ` (skipped: ${skipped.join('; ')})` : ''}`,
      )
    if (plans.length > maxToolsPerSource)
      throw new Error(
        `the document has ${plans.length} operations; at most ${maxToolsPerSource} become tools (list some in operations)`,
      )
    const tools = plans.map((plan) => operationTool(manifest, plan, baseUrl, headers, http))
    return { tools, ...(skipped.length ? { notes: [`skipped ${skipped.join('; ')}`] } : {}) }
  },
}

async function fetchDocument(http: HttpClient, url: string, signal: AbortSignal): Promise<JsonSchema> {
  const response = await http.request({
    url,
    headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' },
    maxBytes: maxDocumentBytes,
    timeoutMs: 20_000,
    signal,
  })
  if (response.status !== 200) throw new Error(`fetching the document answered HTTP ${response.status}`)
  if (response.truncated) throw new Error(`the document is larger than ${maxDocumentBytes} bytes`)
  const text = new TextDecoder().decode(response.body)
  let parsed: unknown
  try {
    parsed = text.trimStart().startsWith('{') ? JSON.parse(text) : await parseYaml(text)
  } catch (error) {
    throw new Error(`the document is neither JSON nor YAML (${(error as Error).message.slice(0, 200)})`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('the document is not an object')
  return parsed as JsonSchema
}

function serverUrl(document: JsonSchema, documentUrl: string | undefined): string | undefined {
  const servers = Array.isArray(document.servers) ? document.servers : []
  const first = servers[0] as { url?: unknown; variables?: Record<string, { default?: unknown }> } | undefined
  if (!first || typeof first.url !== 'string') return documentUrl ? new URL('/', documentUrl).href : undefined
  const filled = first.url.replace(/\{([^}]+)\}/g, (_, name: string) => String(first.variables?.[name]?.default ?? ''))
  try {
    return new URL(filled, documentUrl).href
  } catch {
    return undefined
  }
}

/**
 * A path parameter as one segment of its template: percent-encoded, and never empty, `.` or `..`, which
 * every URL parser (and the upstream's router) resolves away, moving the call to another path of the
 * API (`GET /items/{id}/details` with id `..` would be `GET /details`) with the source's credentials.
 */
function pathSegment(plan: OperationPlan, name: string, value: unknown): string {
  const segment = encodeURIComponent(String(value ?? ''))
  if (segment !== '' && segment !== '.' && segment !== '..') return segment
  throw new ToolError(
    'validation',
    `The path parameter ${name} of ${plan.name} cannot be ${JSON.stringify(segment)}.`,
    {
      hint: `${name} fills one segment of ${plan.path}: an empty value, "." or ".." would send the call to another path.`,
      details: { field: name },
    },
  )
}

function operationTool(
  manifest: OpenApiManifest,
  plan: OperationPlan,
  baseUrl: string,
  headers: Record<string, string>,
  http: HttpClient,
): CatalogEntry {
  const schemas = declaredSchemas({ name: plan.name, input_schema: plan.input, output_schema: plan.output })
  const requestOf = (input: Record<string, unknown>) => {
    const path = plan.path.replace(/\{([^}]+)\}/g, (_, name: string) => pathSegment(plan, name, input[name]))
    const url = new URL(`${baseUrl.replace(/\/+$/, '')}${path}`)
    for (const name of plan.queryParams) {
      const value = input[name]
      if (value === undefined) continue
      for (const item of Array.isArray(value) ? value : [value]) {
        url.searchParams.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item))
      }
    }
    const body =
      plan.body.mode === 'flat'
        ? Object.fromEntries(plan.body.fields.filter((field) => field in input).map((field) => [field, input[field]]))
        : plan.body.mode === 'property'
          ? input.body
          : undefined
    return {
      url: url.href,
      method: plan.method,
      headers: {
        ...headers,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      // The manifest's headers (its secrets among them) never follow a redirect to another origin.
      secretHeaders: Object.keys(headers),
    }
  }
  const tool = defineTool({
    name: plan.name,
    title: plan.title,
    description: plan.description,
    effect: plan.effect,
    input: schemas.input.validator,
    output: schemas.output.validator,
    callTitle: (input) =>
      `${plan.method} ${requestOf(input as Record<string, unknown>).url.replace(/^https?:\/\//, '')}`.slice(0, 120),
    deadlineMs: () => manifest.timeout_seconds * 1000 + 5_000,
    async run(input, tool) {
      // A client span of the call; the upstream gets its W3C context (traceparent) when tracing is on.
      const result = await inSpan(
        tool.span,
        `source ${manifest.id}`,
        { 'toolport.source': manifest.id, 'http.request.method': plan.method },
        (span) => {
          const request = requestOf(input as Record<string, unknown>)
          return upstreamJson(http, {
            source: manifest.id,
            tool: plan.name,
            request: { ...request, headers: { ...request.headers, ...carrierHeaders(span.carrier()) } },
            timeoutMs: manifest.timeout_seconds * 1000,
            maxBytes: manifest.max_response_bytes,
            signal: tool.signal,
          })
        },
        'client',
      )
      return schemas.check(result, tool.limits.maxResponseChars)
    },
    async dryRun(input) {
      const request = requestOf(input as Record<string, unknown>)
      const headers = maskHeaders(request.headers, Object.keys(manifest.headers ?? {}))
      return { request: { ...request, headers }, address: await verdictOf(http, request.url) }
    },
  })
  return sourceEntry(manifest.id, tool, {
    schemas: { input: schemas.input.published, output: schemas.output.published },
  })
}
