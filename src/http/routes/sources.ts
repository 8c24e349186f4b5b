import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi'
import type { Principal } from '../../auth/principal'
import { type Audit, type AuditAction, noAudit } from '../../core/audit'
import { ToolError } from '../../core/errors'
import { sourceIdPattern } from '../../sources/declared'
import type { SourceHost } from '../../sources/host/source-host'
import { maxManifestBytes, SourceManifest } from '../../sources/manifest'
import { ReferencePluginManifest } from '../../sources/reference-shape'
import type { AppEnv } from '../env'
import { limitBody } from '../middleware/body-limit'
import { problemContent } from '../problem'

const SourceStatus = z
  .object({
    id: z.string(),
    kind: z.string(),
    owner: z.enum(['operator', 'tenant']),
    status: z.enum(['loading', 'ready', 'error', 'disabled']),
    enabled: z.boolean().describe('False when the manifest says "enabled": false (PATCH /v1/sources/{id} flips it).'),
    supports_ai: z.boolean().describe('Whether it offers tools to models: false for a plugin with "aiTools": [].'),
    since: z.string().describe('When it entered its status (ISO 8601).'),
    reason: z.string().optional().describe('Why the source is in error, or notes on a ready one (tools skipped).'),
    tools: z.array(z.string()).describe('The names its tools have in the catalog.'),
    refreshed_at: z.string().nullable(),
    revision: z.string(),
  })
  .openapi('SourceStatus')

const SourceIdParam = z
  .string()
  .regex(sourceIdPattern)
  .openapi({ param: { name: 'id', in: 'path' }, description: 'The source id.' })
const tags = ['sources']
const security = [{ bearerAuth: [] }]
const denied = { 403: { description: 'The key is not an admin key.', content: problemContent } }

const listSources = createRoute({
  method: 'get',
  path: '/v1/sources',
  operationId: 'list_sources',
  summary: 'List sources',
  description: "The operator's sources and this tenant's, each with its status and the tools it contributes.",
  tags,
  security,
  responses: {
    200: {
      description: 'The sources.',
      content: { 'application/json': { schema: z.object({ sources: z.array(SourceStatus) }) } },
    },
    ...denied,
  },
})

const getSource = createRoute({
  method: 'get',
  path: '/v1/sources/{id}',
  operationId: 'get_source',
  summary: 'Get source',
  description: 'One source: status (ready, error, loading), reason, tools and last refresh.',
  tags,
  security,
  request: { params: z.object({ id: SourceIdParam }) },
  responses: {
    200: { description: 'The source.', content: { 'application/json': { schema: SourceStatus } } },
    ...denied,
    404: { description: 'No such source for this tenant.', content: problemContent },
  },
})

const putSource = createRoute({
  method: 'put',
  path: '/v1/sources/{id}',
  operationId: 'put_source',
  summary: 'Register or replace source',
  description:
    'Register (201) or replace (200) one of this tenant\'s sources from its manifest; its tools are in the catalog as soon as it loads. The answer is its status: a source that cannot load is "error" with the reason.',
  tags,
  security,
  request: {
    params: z.object({ id: SourceIdParam }),
    body: { required: true, content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
  },
  responses: {
    200: { description: 'Replaced.', content: { 'application/json': { schema: SourceStatus } } },
    201: { description: 'Registered.', content: { 'application/json': { schema: SourceStatus } } },
    400: { description: 'The manifest is not valid: the problem names the field.', content: problemContent },
    403: { description: 'Not an admin key, or a kind or address tenants may not use.', content: problemContent },
    409: {
      description: "The id is an operator source's, or a tool of the manifest takes a name already in the catalog.",
      content: problemContent,
    },
    413: { description: 'The manifest is too large, or the tenant has too many sources.', content: problemContent },
  },
})

const patchSource = createRoute({
  method: 'patch',
  path: '/v1/sources/{id}',
  operationId: 'patch_source',
  summary: 'Enable or disable source',
  description:
    "Turn one of this tenant's sources off (its tools leave the catalog and answer 503 as unavailable) or on again, keeping it registered: its manifest's `enabled`. Anything else is changed with PUT.",
  tags,
  security,
  request: {
    params: z.object({ id: SourceIdParam }),
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .strictObject({ enabled: z.boolean().describe('false: disabled; true: serve its tools again.') })
            .openapi('SourcePatch'),
        },
      },
    },
  },
  responses: {
    200: { description: 'Its status now.', content: { 'application/json': { schema: SourceStatus } } },
    400: { description: 'The body is not { "enabled": true|false }.', content: problemContent },
    ...denied,
    404: {
      description: "No such source for this tenant (an operator's source is the operator's).",
      content: problemContent,
    },
    409: { description: 'Another request changed the source meanwhile.', content: problemContent },
  },
})

const deleteSource = createRoute({
  method: 'delete',
  path: '/v1/sources/{id}',
  operationId: 'delete_source',
  summary: 'Remove source',
  description: "Remove one of this tenant's sources; its tools leave the catalog at once.",
  tags,
  security,
  request: { params: z.object({ id: SourceIdParam }) },
  responses: {
    204: { description: 'Removed.' },
    ...denied,
    404: { description: 'No such source for this tenant.', content: problemContent },
  },
})

/** The source routes, for the OpenAPI document of admin keys. */
export const sourceRoutes = [listSources, getSource, putSource, patchSource, deleteSource]

function assertAdmin(principal: Principal): void {
  if (principal.admin) return
  throw new ToolError('permission_denied', 'This key may not manage tool sources.', {
    hint: 'Use an admin key of this tenant: a keys-file entry with "admin": true.',
  })
}

function notFound(id: string): ToolError {
  return new ToolError('not_found', `There is no source ${id} for this tenant.`, {
    hint: 'GET /v1/sources lists the sources; register one with PUT /v1/sources/{id}.',
  })
}

/** /v1/sources: what admin keys use to bring their tenant's own tools. */
export function registerSourceRoutes(
  app: OpenAPIHono<AppEnv>,
  host: SourceHost | undefined,
  audit: Audit = noAudit,
): void {
  const told = (
    context: { get(key: 'principal'): Principal; get(key: 'requestId'): string },
    action: AuditAction,
    id: string,
    details: Record<string, string | number | boolean | null> = {},
  ) => {
    const principal = context.get('principal')
    return audit.record({
      tenant: principal.tenant,
      principal: principal.id,
      action,
      target: id,
      outcome: 'success',
      requestId: context.get('requestId'),
      details,
    })
  }
  const admin = async (
    context: { get(key: 'principal'): Principal; get(key: 'requestId'): string; req: { method: string; path: string } },
    next: () => Promise<void>,
  ) => {
    const principal = context.get('principal')
    if (!principal.admin && context.req.method !== 'GET') {
      // A key trying to change what its tenant's keys may call: kept, with what it tried.
      await audit.record({
        tenant: principal.tenant,
        principal: principal.id,
        action: 'call.refused',
        target: context.req.path.slice(0, 200),
        outcome: 'refused',
        requestId: context.get('requestId'),
        details: { reason: 'admin', method: context.req.method },
      })
    }
    assertAdmin(principal)
    if (!host) {
      throw new ToolError('unavailable', 'This deployment serves built-in tools only.', {
        notOffered: true,
        hint: 'Sources are off here; ask the operator.',
      })
    }
    await next()
  }
  const sources = () => host as SourceHost
  app.use('/v1/sources', admin)
  app.use('/v1/sources/*', admin)
  app.openapi(listSources, async (context) => {
    const statuses = await sources().statuses(context.get('principal').tenant)
    return context.json({ sources: statuses }, 200)
  })
  app.openapi(getSource, async (context) => {
    const { id } = context.req.valid('param')
    const statuses = await sources().statuses(context.get('principal').tenant)
    // The tenant's own source first: an operator source of the same id is shown only when there is none.
    const found =
      statuses.find((status) => status.id === id && status.owner === 'tenant') ??
      statuses.find((status) => status.id === id)
    if (!found) throw notFound(id)
    return context.json(found, 200)
  })
  app.put('/v1/sources/:id', limitBody(maxManifestBytes, `A manifest may have at most ${maxManifestBytes} bytes.`))
  app.openapi(putSource, async (context) => {
    const { id } = context.req.valid('param')
    const tenant = context.get('principal').tenant
    const statuses = await sources().statuses(tenant)
    if (statuses.some((status) => status.id === id && status.owner === 'operator')) {
      throw new ToolError('conflict', `The id ${id} belongs to an operator source.`, {
        hint: 'Choose another id for your source.',
        details: { field: 'id' },
      })
    }
    const { status, created } = await sources().put(tenant, id, context.req.valid('json'))
    await told(context, created ? 'source.created' : 'source.changed', id, { kind: status.kind, status: status.status })
    return context.json(status, created ? 201 : 200)
  })
  app.openapi(patchSource, async (context) => {
    const { id } = context.req.valid('param')
    const enabled = context.req.valid('json').enabled
    const status = await sources().setEnabled(context.get('principal').tenant, id, enabled)
    if (!status) throw notFound(id)
    await told(context, enabled ? 'source.enabled' : 'source.disabled', id, { kind: status.kind })
    return context.json(status, 200)
  })
  app.openapi(deleteSource, async (context) => {
    const { id } = context.req.valid('param')
    if (!(await sources().remove(context.get('principal').tenant, id))) throw notFound(id)
    await told(context, 'source.removed', id)
    return context.body(null, 204)
  })
}

/**
 * The JSON Schema of a manifest, published at GET /schemas/source-manifest.json: every kind, or a
 * plugin manifest in reference 002's shape (aiTools and rpc.methods), which is read as a worker.
 */
export function manifestJsonSchema(): Record<string, unknown> {
  const options = { io: 'input', unrepresentable: 'any' } as const
  const { $schema, ...kinds } = z.toJSONSchema(SourceManifest, options) as Record<string, unknown>
  const { $schema: _, ...plugin } = z.toJSONSchema(ReferencePluginManifest, options) as Record<string, unknown>
  return {
    $schema,
    anyOf: [kinds, { ...plugin, title: 'Plugin manifest (reference 002: aiTools and rpc.methods)' }],
  }
}
