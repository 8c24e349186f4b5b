import { z } from '@hono/zod-openapi'
import { ToolError } from '../core/errors'

/** ?workspace=: not a header, since GPT Actions cannot send custom headers. */
export const WorkspaceId = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/)
  .refine((value) => !/^\.+$/.test(value), 'must not be only dots')
  .default('default')
  .openapi({
    param: { name: 'workspace', in: 'query' },
    description: 'Workspace id; every path of the call is relative to it. Default: "default".',
    example: 'default',
  })

/** The workspace of a route that takes no validated query (MCP, /v1/context). */
export function parseWorkspace(value: string | undefined): string {
  const parsed = WorkspaceId.safeParse(value)
  if (parsed.success) return parsed.data
  throw new ToolError('validation', `Invalid workspace ${JSON.stringify(value)}.`, {
    hint: 'Use a workspace id of 1 to 64 characters from A-Z, a-z, 0-9, ".", "_" and "-", not only dots.',
    details: { field: 'workspace' },
  })
}
