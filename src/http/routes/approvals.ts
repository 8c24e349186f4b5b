import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi'
import type { Caller } from '../../caller/caller'
import { recordIdPattern } from '../../storage/json-records'
import { requestDisconnect } from '../call-facts'
import type { AppEnv } from '../env'
import { problemContent } from '../problem'
import { assertKnownQuery } from '../query'

const ApprovalId = z
  .string()
  .regex(recordIdPattern)
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
export const ApprovalCard = z
  .object({
    approval_id: z.string(),
    status: z.literal('pending'),
    title: z.string().describe('What the call does, e.g. "Delete notes/old.md".'),
    tool: z.string(),
    effect: z.string().optional().describe('The effect the approval policy gated: write, external or destructive.'),
    workspace: z.string(),
    input: z.unknown().describe('The call as the key sent it (validated).'),
    preview: z.unknown().describe("What the call would do: the tool's dry run, or the title and input."),
    truncated: z.literal(true).optional(),
    hint: z.string().optional(),
    requested_by: z.string().describe('The key that asked, as key-N (never the key itself).'),
    created_at: z.string(),
    expires_at: z.string(),
    approve_url: z.string().describe('POST {"decision": "approve"} or {"decision": "reject"} here.'),
  })
  .openapi('ApprovalCard')

const ApprovalList = z
  .object({
    approvals: z.array(ApprovalCard).describe('Pending calls of this tenant, newest first.'),
    next_cursor: z.string().optional().describe('Pass as ?cursor= for the next page; absent on the last one.'),
  })
  .openapi('ApprovalList')

const InboxQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(20)
    .openapi({ param: { name: 'limit', in: 'query' }, description: 'Cards per page, 1-100. Default: 20.' }),
  cursor: z
    .string()
    .regex(recordIdPattern)
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' }, description: 'next_cursor of the previous page.' }),
})

/** GET /v1/approvals: the approver's inbox. */
export const listApprovals = createRoute({
  method: 'get',
  path: '/v1/approvals',
  operationId: 'list_approvals',
  summary: 'List pending approvals',
  description:
    "The tenant's calls waiting for a decision, newest first, for an approver key. Each card has the title, tool, preview, input, who asked and the expiry.",
  tags: ['approvals'],
  security: [{ bearerAuth: [] }],
  request: { query: InboxQuery },
  responses: {
    200: { description: 'A page of pending approvals.', content: { 'application/json': { schema: ApprovalList } } },
    400: { description: 'Invalid limit or cursor.', content: problemContent },
    401: { description: 'Missing or invalid bearer key.', content: problemContent },
    403: { description: 'The key is not an approver key.', content: problemContent },
  },
})

/** GET /v1/approvals/{id}: one card. */
export const showApproval = createRoute({
  method: 'get',
  path: '/v1/approvals/{id}',
  operationId: 'get_approval',
  summary: 'Show approval',
  description: 'One pending call as its approver sees it: title, tool, preview, input, who asked, expiry.',
  tags: ['approvals'],
  security: [{ bearerAuth: [] }],
  request: { params: z.object({ id: ApprovalId }) },
  responses: {
    200: { description: 'The approval card.', content: { 'application/json': { schema: ApprovalCard } } },
    401: { description: 'Missing or invalid bearer key.', content: problemContent },
    403: { description: 'The key is not an approver key.', content: problemContent },
    404: { description: 'No such pending call for this tenant, or it expired.', content: problemContent },
  },
})

/**
 * The approver's routes: the inbox (list_approvals), a card (get_approval), and POST
 * /v1/approvals/{id} (decide_approval): approve runs the stored call once, reject drops it.
 */
export function registerApprovalRoutes(app: OpenAPIHono<AppEnv>, caller: Caller): void {
  app.openapi(listApprovals, async (context) => {
    assertKnownQuery(context.req.url, ['limit', 'cursor'])
    const { limit, cursor } = context.req.valid('query')
    const page = await caller.approvals.list(context.get('principal'), {
      limit,
      cursor,
      origin: context.get('linkOrigin'),
    })
    return context.json(page as never, 200)
  })
  app.openapi(showApproval, async (context) => {
    const { id } = context.req.valid('param')
    return context.json(
      (await caller.approvals.show(context.get('principal'), id, context.get('linkOrigin'))) as never,
      200,
    )
  })
  app.openapi(decideApproval, async (context) => {
    const { id } = context.req.valid('param')
    const { decision } = context.req.valid('json')
    const outcome = await caller.decide(context.get('principal'), id, decision, {
      origin: context.get('linkOrigin'),
      disconnect: requestDisconnect(context),
      requestId: context.get('requestId'),
    })
    if ('rejected' in outcome) return context.json({ status: 'rejected', approval_id: id } as never, 200)
    context.set('tool', outcome.tool)
    return context.json(outcome.output as never, 200)
  })
}
