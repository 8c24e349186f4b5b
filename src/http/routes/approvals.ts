import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi'
import type { Caller } from '../../caller/caller'
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

/** POST /v1/approvals/{id}, as the OpenAPI document describes it. */
export const decideApproval = createRoute({
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
/** POST /v1/approvals/{id} (decide_approval): approve runs the stored call once, reject drops it. */
export function registerApprovalRoutes(app: OpenAPIHono<AppEnv>, caller: Caller): void {
  app.openapi(decideApproval, async (context) => {
    const { id } = context.req.valid('param')
    const { decision } = context.req.valid('json')
    const outcome = await caller.decide(context.get('principal'), id, decision, {
      origin: new URL(context.req.url).origin,
      signal: context.req.raw.signal,
    })
    if ('rejected' in outcome) return context.json({ status: 'rejected', approval_id: id } as never, 200)
    context.set('tool', outcome.tool)
    return context.json(outcome.output as never, 200)
  })
}
