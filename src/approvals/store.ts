import type { Principal } from '../auth/authenticator'
import { ToolError } from '../core/errors'
import { createJsonRecords, isRecordId, type JsonRecords } from '../storage/json-records'
import { withObjectLock } from '../storage/lock'
import type { ObjectStore } from '../storage/store'
import { type DryRun, fileDryRuns } from '../tools/files/dry-run'
import type { ToolServices } from '../tools/services'
import { type Tool, type ToolLimits, titleOfCall } from '../tools/tool'
import { createWorkspace } from '../workspace/workspace'

/** A call waiting for POST /v1/approvals/{id}; stored as approvals/{tenant}/{id}.json (lifecycle-expired in S3). */
export interface ApprovalRecord {
  id: string
  tenant: string
  principal: { id: string; tools: string[] | null }
  tool: string
  workspace: string
  input: unknown
  title: string
  created_at: string
  expires_at: string
}

export interface ApprovalStore extends JsonRecords<ApprovalRecord> {
  /**
   * Loads and removes a pending call in one step: of concurrent takers (a double click, a retrying client,
   * two instances) exactly one gets the record, so an approved call runs at most once.
   */
  take(tenant: string, id: string): Promise<ApprovalRecord | undefined>
}

export function createApprovalStore(storage: ObjectStore): ApprovalStore {
  const records = createJsonRecords<ApprovalRecord>(storage, (tenant, id) => `approvals/${tenant}/${id}.json`)
  return {
    ...records,
    async take(tenant, id) {
      if (!isRecordId(id)) return undefined
      return withObjectLock(storage, `approvals/${tenant}/${id}.lock`, async () => {
        const record = await records.load(tenant, id)
        if (record) await records.remove(tenant, id)
        return record
      })
    },
  }
}

export interface ApprovalDeps {
  store: ApprovalStore
  storage: ObjectStore
  limits: ToolLimits
  services: ToolServices
  ttlSeconds: number
  /** TOOLPORT_PUBLIC_URL when set; otherwise approve_url points at the request's origin. */
  publicUrl: string | undefined
  now?: () => Date
}

export interface GatedCall {
  tool: Tool
  input: unknown
  principal: Principal
  workspaceId: string
  origin: string
  dryRun: boolean
}

export function dryRunOf(tool: Tool): DryRun | undefined {
  return Object.hasOwn(fileDryRuns, tool.name) ? fileDryRuns[tool.name] : undefined
}

/**
 * Runs before a tool call: ?dry_run=true answers the preview; a call the key must have approved is
 * stored and answered 202 pending_approval — after its dry run, so a refusal known up front (missing
 * file, bad path, old_text not found) is answered at once instead of costing someone a decision.
 * Undefined: run the call as usual.
 */
export async function gateCall(
  deps: ApprovalDeps,
  call: GatedCall,
): Promise<{ status: 200 | 202; body: Record<string, unknown> } | undefined> {
  const { tool, principal } = call
  const needsApproval = principal.requireApproval.has(tool.effect)
  if (!call.dryRun && !needsApproval) return undefined
  const dryRun = dryRunOf(tool)
  if (call.dryRun && !dryRun) {
    throw new ToolError('validation', `${tool.name} has no dry run.`, {
      hint: 'dry_run=true is supported by write_file, apply_edit, multi_edit, revert_edit and delete_file.',
      details: { field: 'dry_run' },
    })
  }
  const workspace = createWorkspace(deps.storage, principal.tenant, call.workspaceId, { quota: deps.services.quota })
  const title = titleOfCall(tool, call.input)
  const preview = dryRun
    ? await dryRun(call.input as never, { workspace, limits: deps.limits })
    : { title, input: call.input }
  if (call.dryRun) return { status: 200, body: { dry_run: true, preview } }

  const now = (deps.now ?? (() => new Date()))()
  const record: ApprovalRecord = {
    id: crypto.randomUUID(),
    tenant: principal.tenant,
    principal: { id: principal.id, tools: principal.tools ? [...principal.tools] : null },
    tool: tool.name,
    workspace: call.workspaceId,
    input: call.input,
    title,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + deps.ttlSeconds * 1000).toISOString(),
  }
  await deps.store.save(record)
  return {
    status: 202,
    body: {
      status: 'pending_approval',
      approval_id: record.id,
      title,
      tool: tool.name,
      preview,
      expires_at: record.expires_at,
      approve_url: approvalUrl(deps.publicUrl ?? call.origin, record.id),
    },
  }
}

export function approvalUrl(origin: string, id: string): string {
  return `${origin}/v1/approvals/${id}`
}
