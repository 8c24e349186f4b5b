import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Authenticator } from '../../auth/authenticator'
import type { Catalog } from '../../catalog/catalog'
import type { CatalogEntry } from '../../catalog/entry'
import { ToolError } from '../../core/errors'
import type { AppEnv } from '../env'
import { buildOpenApiDocument, type OpenApiDocument, openApiDocumentText, subsetDocument } from '../openapi-document'
import { assertKnownQuery } from '../query'

// Documents of the last few catalogs, by revision: keys of one tenant share one.
const cachedDocuments = 16

/**
 * GET /openapi.json: the OpenAPI document of what the calling key may call (built-ins and source
 * tools), `?tools=a,b` for a subset. Without a key: the built-ins and the operator's sources. The
 * committed openapi/openapi.json is the document of the built-ins alone.
 */
export function registerOpenApiRoute(
  app: OpenAPIHono<AppEnv>,
  deps: { catalog: Catalog; authenticator: Authenticator; publicUrl: string; version: string },
): void {
  const { catalog, publicUrl, version } = deps
  // The document and its JSON, made once per catalog revision: importers fetch the same one again and again.
  const documents = new Map<string, { text: string; document?: OpenApiDocument }>()
  const generatedCache = new Map<string, string>()
  app.get('/openapi.json', async (context) => {
    assertKnownQuery(context.req.url, ['tools'])
    // Public, as importers fetch it without a key; with one, it is that key's catalog.
    const authorization = context.req.header('authorization')
    const principal =
      deps.authenticator.enabled && authorization === undefined
        ? undefined
        : await deps.authenticator.authenticate(authorization)
    if (principal) context.header('Cache-Control', 'no-store')
    const view = await catalog.view(principal)
    // The management routes are for admin keys; the no-keys caller's document is the built-ins' alone.
    const admin = principal?.admin === true && principal.id !== 'anonymous'
    const key = `${view.revision}:${admin}`
    const options = {
      publicUrl,
      version,
      admin,
      generatedCache,
      schemasOf: (entry: CatalogEntry) =>
        entry.schemas ? { input: catalog.inputSchema(entry), output: entry.schemas.output } : undefined,
    }
    let cached = documents.get(key)
    if (!cached) {
      cached = { text: openApiDocumentText(view.entries, options) }
      documents.set(key, cached)
      if (documents.size > cachedDocuments) documents.delete(documents.keys().next().value as string)
    }
    const wanted = context.req.query('tools')
    if (wanted === undefined) return context.body(cached.text, 200, { 'content-type': 'application/json' })
    const known = new Set(view.entries.map((entry) => entry.name))
    const names = parseToolList(wanted, known)
    // Only a subset needs the document as objects; made once per revision, like the text.
    cached.document ??= buildOpenApiDocument(view.entries, options)
    return context.json(subsetDocument(cached.document, names))
  })
}

function parseToolList(value: string, known: ReadonlySet<string>): Set<string> {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const unknown = names.filter((name) => !known.has(name))
  if (names.length === 0 || unknown.length > 0) {
    const detail =
      names.length === 0 ? 'The tools parameter names no tool.' : `Unknown tool in tools: ${unknown.join(', ')}.`
    throw new ToolError('validation', detail, {
      hint: `Name tools from GET /v1/tools, separated by commas, e.g. tools=${[...known].slice(0, 2).join(',')}.`,
      details: { field: 'tools' },
    })
  }
  return new Set(names)
}
