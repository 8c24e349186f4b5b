import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi'
import type { AuditLog } from '../../audit/audit-log'
import type { Principal } from '../../auth/principal'
import { auditActions } from '../../core/audit'
import { ToolError } from '../../core/errors'
import type { ObjectStore } from '../../storage/store'
import type { UsageLedger } from '../../usage/usage-meter'
import { measureTenantBytes } from '../../workspace/quota'
import type { AppEnv } from '../env'
import { problemContent } from '../problem'
import { assertKnownQuery } from '../query'

const tags = ['operations']
const security = [{ bearerAuth: [] }]
const refusals = {
  400: { description: 'An unknown or invalid query parameter.', content: problemContent },
  401: { description: 'Missing or invalid bearer key.', content: problemContent },
  403: { description: 'The key is not an admin key.', content: problemContent },
  503: { description: 'The audit log (or usage) is off here (TOOLPORT_AUDIT=false).', content: problemContent },
}

const AuditRecord = z
  .object({
    seq: z.number().int().describe("Its place in the tenant's chain, from 1."),
    time: z.string().describe('ISO 8601.'),
    tenant: z.string(),
    principal: z.string().describe('The key (key-N), anonymous, unknown (a refused key) or system.'),
    action: z.enum(auditActions as [string, ...string[]]),
    target: z.string().nullable().describe('A source id, approval id, tool name or host.'),
    outcome: z.enum(['success', 'refused', 'expired']),
    request_id: z.string().nullable(),
    trace_id: z.string().nullable().describe('The W3C trace id of the call, when it had one.'),
    details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
    prev: z.string().describe('The hash of the record before it (64 zeros for the first).'),
    hash: z.string().describe("SHA-256 of this record's canonical JSON without hash."),
  })
  .openapi('AuditRecord')

const seqParam = (name: string, description: string) =>
  z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .openapi({ param: { name, in: 'query' }, description })

const AuditQuery = z.object({
  action: z
    .enum(auditActions as [string, ...string[]])
    .optional()
    .openapi({ param: { name: 'action', in: 'query' }, description: 'Only this action.' }),
  outcome: z
    .enum(['success', 'refused', 'expired'])
    .optional()
    .openapi({ param: { name: 'outcome', in: 'query' }, description: 'Only this outcome.' }),
  principal: z
    .string()
    .max(200)
    .optional()
    .openapi({ param: { name: 'principal', in: 'query' }, description: 'Only what this key (key-N) did.' }),
  target: z
    .string()
    .max(500)
    .optional()
    .openapi({
      param: { name: 'target', in: 'query' },
      description: 'Only what concerns this source, approval, tool or host.',
    }),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ param: { name: 'since', in: 'query' }, description: 'Only records at or after this time (ISO 8601).' }),
  until: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ param: { name: 'until', in: 'query' }, description: 'Only records before this time (ISO 8601).' }),
  after: seqParam('after', 'Oldest first, from the record after this seq (0: from the start).'),
  before: seqParam('before', 'Newest first, from the record before this seq (the default starts at the newest).'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .openapi({ param: { name: 'limit', in: 'query' }, description: 'Records per page, 1-1000. Default: 100.' }),
})

const AuditPage = z
  .object({
    records: z.array(AuditRecord),
    next: z
      .string()
      .optional()
      .describe('The query string of the next page (after=N or before=N); absent when the chain is read to its end.'),
  })
  .openapi('AuditPage')

const AuditVerification = z
  .object({
    tenant: z.string(),
    ok: z.boolean().describe('True when every record is intact and linked to the one before it.'),
    records: z.number().int(),
    first_seq: z.number().int().nullable(),
    last_seq: z.number().int().nullable(),
    pruned_through: z
      .number()
      .int()
      .nullable()
      .describe('Records up to here were removed by retention (an audit.pruned record says so).'),
    problems: z.array(
      z.object({
        seq: z.number().int(),
        through: z.number().int().optional(),
        problem: z.enum(['missing', 'edited', 'unlinked', 'unreadable']),
        detail: z.string(),
      }),
    ),
  })
  .openapi('AuditVerification')

export const listAudit = createRoute({
  method: 'get',
  path: '/v1/audit',
  operationId: 'list_audit',
  summary: 'Read the audit log',
  description:
    "This tenant's audit records (sources changed, approvals, refused calls, connections and keys, sign-ins), newest first unless after= is given; filtered by action, outcome, principal, target and time. For an admin key.",
  tags,
  security,
  request: { query: AuditQuery },
  responses: {
    200: { description: 'A page of records.', content: { 'application/json': { schema: AuditPage } } },
    ...refusals,
  },
})

export const verifyAudit = createRoute({
  method: 'get',
  path: '/v1/audit/verify',
  operationId: 'verify_audit',
  summary: 'Verify the audit log',
  description:
    "Reads this tenant's whole chain and checks every record's hash and link: a record edited, removed or slipped in is reported. For an admin key.",
  tags,
  security,
  responses: {
    200: { description: 'What the check found.', content: { 'application/json': { schema: AuditVerification } } },
    ...refusals,
  },
})

const UsageDay = z
  .object({
    day: z.string().describe('UTC day, YYYY-MM-DD.'),
    calls: z
      .record(z.string(), z.record(z.string(), z.number().int()))
      .describe('Calls by tool, then by outcome (ok or the error code).'),
    tool_seconds: z.number(),
    sandbox_cpu_seconds: z.number(),
    sandbox_peak_memory_bytes: z.number().describe('The largest peak of one sandbox run that day.'),
    browser_session_seconds: z.number(),
    egress_bytes_out: z.number().describe('Bytes sandboxed commands sent through the egress proxy.'),
    egress_bytes_in: z.number(),
    fetch_bytes_out: z.number().describe('Bytes outbound fetches (http_fetch, web_fetch) sent.'),
    fetch_bytes_in: z.number(),
  })
  .openapi('UsageDay')

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/)
const UsageQuery = z.object({
  from: day.optional().openapi({
    param: { name: 'from', in: 'query' },
    description: 'First day (UTC, YYYY-MM-DD). Default: 6 days before to.',
  }),
  to: day.optional().openapi({ param: { name: 'to', in: 'query' }, description: 'Last day. Default: today (UTC).' }),
})

export const getUsage = createRoute({
  method: 'get',
  path: '/v1/usage',
  operationId: 'get_usage',
  summary: 'Read usage',
  description:
    "This tenant's usage by day, summed over every instance of the fleet: calls by tool and outcome, tool seconds, sandbox CPU seconds and peak memory, browser session seconds, bytes sent and received; and the bytes it stores now. For an admin key.",
  tags,
  security,
  request: { query: UsageQuery },
  responses: {
    200: {
      description: 'The days asked for, oldest first.',
      content: {
        'application/json': {
          schema: z.object({
            tenant: z.string(),
            bytes_stored: z.number().int().describe("The bytes of the tenant's workspace files now."),
            days: z.array(UsageDay),
          }),
        },
      },
    },
    ...refusals,
  },
})

/** The routes of this file, for the OpenAPI document of admin keys. */
export const operationRoutes = [listAudit, verifyAudit, getUsage]

function assertAdmin(principal: Principal, what: string): void {
  if (principal.admin) return
  throw new ToolError('permission_denied', `This key may not read the ${what}.`, {
    hint: 'Use an admin key of this tenant: a keys-file entry with "admin": true.',
  })
}

function off(what: string): ToolError {
  return new ToolError('unavailable', `The ${what} is off on this deployment.`, {
    notOffered: true,
    hint: 'The operator turns it on with TOOLPORT_AUDIT=true (the default).',
  })
}

const maxUsageDays = 92

/** GET /v1/audit, /v1/audit/verify and /v1/usage: what a tenant's admin reads of its own tenant, only. */
export function registerOperationRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: { audit: AuditLog | undefined; usage: UsageLedger | undefined; storage: ObjectStore; now?: () => Date },
): void {
  const now = deps.now ?? (() => new Date())
  app.openapi(listAudit, async (context) => {
    const principal = context.get('principal')
    assertAdmin(principal, 'audit log')
    assertKnownQuery(context.req.url, Object.keys(AuditQuery.shape))
    if (!deps.audit) throw off('audit log')
    const query = context.req.valid('query')
    if (query.after !== undefined && query.before !== undefined) {
      throw new ToolError('validation', 'Give after or before, not both.', {
        hint: 'after=N reads oldest first from N; before=N newest first.',
        details: { field: 'after' },
      })
    }
    const page = await deps.audit.page(principal.tenant, {
      after: query.after,
      before: query.before,
      limit: query.limit,
      filter: {
        action: query.action as never,
        outcome: query.outcome,
        principal: query.principal,
        target: query.target,
        since: query.since ? new Date(query.since) : undefined,
        until: query.until ? new Date(query.until) : undefined,
      },
    })
    const next = page.next
      ? 'after' in page.next
        ? `after=${page.next.after}`
        : `before=${page.next.before}`
      : undefined
    return context.json({ records: page.records, ...(next ? { next } : {}) } as never, 200)
  })
  app.openapi(verifyAudit, async (context) => {
    const principal = context.get('principal')
    assertAdmin(principal, 'audit log')
    assertKnownQuery(context.req.url, [])
    if (!deps.audit) throw off('audit log')
    return context.json((await deps.audit.verify(principal.tenant)) as never, 200)
  })
  app.openapi(getUsage, async (context) => {
    const principal = context.get('principal')
    assertAdmin(principal, 'usage')
    assertKnownQuery(context.req.url, ['from', 'to'])
    if (!deps.usage) throw off('usage')
    const query = context.req.valid('query')
    const to = query.to ?? now().toISOString().slice(0, 10)
    const from = query.from ?? new Date(Date.parse(to) - 6 * 86_400_000).toISOString().slice(0, 10)
    const days = daysBetween(from, to)
    const stored = await measureTenantBytes(deps.storage, principal.tenant)
    const usage = await deps.usage.read(principal.tenant, days)
    return context.json({ tenant: principal.tenant, bytes_stored: stored, days: usage } as never, 200)
  })
}

function daysBetween(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`)
  const end = Date.parse(`${to}T00:00:00Z`)
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) {
    throw new ToolError('validation', `No days from ${from} to ${to}.`, {
      hint: 'Give real days (YYYY-MM-DD) with from no later than to.',
      details: { field: 'from' },
    })
  }
  const count = (end - start) / 86_400_000 + 1
  if (count > maxUsageDays) {
    throw new ToolError('validation', `At most ${maxUsageDays} days at once, not ${count}.`, {
      hint: 'Ask for a shorter range of from and to.',
      details: { field: 'from' },
    })
  }
  return Array.from({ length: count }, (_, index) => new Date(start + index * 86_400_000).toISOString().slice(0, 10))
}
