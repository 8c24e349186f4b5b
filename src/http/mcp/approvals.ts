import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { PendingApproval as PendingApprovalBody } from '../../caller/approvals'
import type { McpTool } from '../../platforms/mcp'
import { PendingApproval } from '../approval-schemas'

// Over MCP a call that waits for an approver is a result the model reads, not an error: nothing
// failed, and the model should tell its user who must decide where, instead of retrying.

const pendingSchema = (() => {
  const { $schema: _, ...schema } = z.toJSONSchema(PendingApproval, { io: 'output' }) as Record<string, unknown>
  return schema
})()

/**
 * A listing for a key whose calls of this tool wait for approval: its result is the tool's output or
 * a pending approval, and the declared output schema says so (clients check results against it).
 */
export function gatedListing(listed: McpTool): McpTool {
  const { $defs, ...output } = listed.outputSchema
  return {
    ...listed,
    outputSchema: { type: 'object', ...($defs ? { $defs } : {}), anyOf: [output, pendingSchema] },
  }
}

export function pendingResult(pending: PendingApprovalBody): CallToolResult {
  const what =
    `This call was not run: it waits for an approver (approval ${pending.approval_id}, "${pending.title}"). ` +
    `Someone with an approver key must approve it (POST {"decision":"approve"} to ${pending.approve_url}; ` +
    `the pending calls are listed at GET /v1/approvals) before ${pending.expires_at}. Once approved it runs ` +
    'once and its result goes to the approver; do not call it again meanwhile, tell the user it awaits approval.'
  return {
    structuredContent: pending as unknown as Record<string, unknown>,
    content: [
      { type: 'text', text: what },
      { type: 'text', text: JSON.stringify(pending) },
    ],
  }
}
