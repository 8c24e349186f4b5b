import { z } from '@hono/zod-openapi'

/** The 202 of a call that waits for an approver: declared in OpenAPI, and what MCP's listings allow for. */
export const PendingApproval = z
  .object({
    status: z.literal('pending_approval'),
    approval_id: z.string(),
    title: z.string().describe('What the call does, e.g. "Edit src/app.ts", for the approval card.'),
    tool: z.string(),
    preview: z.unknown().describe('A unified diff, { deletes: [path] }, or the title and input.'),
    truncated: z.literal(true).optional().describe('Set when the preview was cut to the response limit.'),
    hint: z.string().optional().describe('With truncated: how to see the whole change.'),
    expires_at: z.string(),
    approve_url: z.string().describe('POST {"decision": "approve"} or {"decision": "reject"} here.'),
  })
  .openapi('PendingApproval')
