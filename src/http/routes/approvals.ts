import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi'
import type { ApprovalStore } from '../../approvals/store'
import { invokeTool } from '../../caller/invoke'
import { ToolError } from '../../core/errors'
import type { ToolServices } from '../../tools/services'
import type { Logger, Tool, ToolLimits } from '../../tools/tool'
import type { AppEnv } from '../env'
import { Problem } from '../problem'

export const PendingApproval = z
  .object({
    status: z.literal('pending_approval'),
    approval_id: z.string(),
    title: z.string().describe('What the call does, e.g. "Edit src/app.ts", for the approval card.'),
    tool: z.string(),
    preview: z.unknown().describe('A unified diff, { deletes: [path] }, or the title and input.'),
    expires_at: z.string(),
    approve_url: z.string().describe('POST {"decision": "approve"} or {"decision": "reject"} here.'),
  })
  .openapi('PendingApproval')

const problemContent = { 'application/problem+json': { schema: Problem } }
const ApprovalId = z
  .string()
  .regex(/^[A-Za-z0-9-]{8,64}$/)
  .openapi({ param: { name: 'id', in: 'path' }, description: 'The approval_id of a pending call.' })

export interface ApprovalRouteDeps {
  store: ApprovalStore
  tools: readonly Tool[]
  storage: Parameters<typeof invokeTool>[0]['storage']
  limits: ToolLimits
  log: Logger
  services: ToolServices
  now?: () => Date
}

function notFound(id: string, hint = 'Approvals are visible only to their tenant and are gone once decided.') {
  return new ToolError('not_found', `No pending approval ${id} for this key.`, { hint })
}

/**
 * The key that asked for a call must not be the one that lets it through, or a model holding it could
 * approve its own calls: deciding takes a separate approver key.
 */
function notAnApprover() {
  return new ToolError('permission_denied', 'This key may not decide approvals.', {
    hint: 'Decide with an approver key of the same tenant: a keys-file entry with "approver": true. The key whose calls need approval cannot approve them.',
  })
}

/** POST /v1/approvals/{id} (decide_approval): approve runs the stored call once, reject drops it. */
export function registerApprovalRoutes(app: OpenAPIHono<AppEnv>, deps: ApprovalRouteDeps): void {
  const toolsByName = new Map(deps.tools.map((tool) => [tool.name, tool]))
  const route = createRoute({
    method: 'post',
    path: '/v1/approvals/{id}',
    operationId: 'decide_approval',
    summary: 'Decide approval',
    description:
      'Approve or reject a call that answered 202 pending_approval, with an approver key of the same tenant. approve runs it once and returns the tool result; reject drops it. Pending approvals expire.',
    tags: ['approvals'],
    security: [{ bearerAuth: [] }],
    request: {
      params: z.object({ id: ApprovalId }),
      body: {
        required: true,
        content: {
          'application/json': {
            schema: z.object({ decision: z.enum(['approve', 'reject']).describe('approve | reject') }),
          },
        },
      },
    },
    responses: {
      200: {
        description: 'approve: the tool result; reject: { status: "rejected" }.',
        content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
      },
      400: { description: 'Invalid decision.', content: problemContent },
      403: { description: 'The key is not an approver key.', content: problemContent },
      404: { description: 'No such pending call for this tenant, or it expired.', content: problemContent },
    },
  })
  app.openapi(route, async (context) => {
    const { id } = context.req.valid('param')
    const { decision } = context.req.valid('json')
    const { tenant, approver } = context.get('principal')
    // Checked before the lookup, so a key that may not decide learns nothing about pending calls.
    if (!approver) throw notAnApprover()
    // Removed before anything runs: a second decision, concurrent or later, finds nothing.
    const record = await deps.store.take(tenant, id)
    if (!record) throw notFound(id)
    const now = (deps.now ?? (() => new Date()))()
    if (Date.parse(record.expires_at) <= now.getTime()) {
      throw notFound(id, `The approval expired at ${record.expires_at}; call the tool again to ask anew.`)
    }
    if (decision === 'reject') return context.json({ status: 'rejected', approval_id: id } as never, 200)
    const tool = toolsByName.get(record.tool)
    if (!tool) throw notFound(id, `The tool ${record.tool} is no longer enabled.`)
    context.set('tool', tool.name)
    const output = await invokeTool({
      tool,
      input: record.input,
      // The caller that asked, with its tool scope; the approval is what lets it through.
      principal: {
        id: record.principal.id,
        tenant: record.tenant,
        tools: record.principal.tools ? new Set(record.principal.tools) : undefined,
        requireApproval: new Set(),
        approver: false,
      },
      workspaceId: record.workspace,
      storage: deps.storage,
      limits: deps.limits,
      log: deps.log,
      services: deps.services,
      signal: context.req.raw.signal,
      origin: new URL(context.req.url).origin,
    })
    return context.json(output as never, 200)
  })
}
