import type { StoredPrincipal } from '../auth/principal'
/** A tool call that runs after its HTTP request has been answered. Stored as JSON in object storage. */
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled'

export interface JobRecord {
  id: string
  tenant: string
  /** The submitting key's id and tool scope, re-checked when the job runs. */
  principal: StoredPrincipal
  tool: string
  workspace: string
  input: unknown
  origin: string | null
  callback_url: string | null
  status: JobStatus
  created_at: string
  started_at: string | null
  finished_at: string | null
  /** Refreshed while running; a stale one means the process running it died. */
  heartbeat_at: string | null
  expires_at: string
  progress: { output_bytes: number } | null
  result: unknown
  error: Record<string, unknown> | null
}

/** What GET /v1/jobs/{id} shows: everything but the internals. */
export function publicJob(job: JobRecord, statusUrl: string) {
  return {
    job_id: job.id,
    status: job.status,
    tool: job.tool,
    workspace: job.workspace,
    created_at: job.created_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
    expires_at: job.expires_at,
    progress: job.progress,
    status_url: statusUrl,
    ...(job.status === 'succeeded' ? { result: job.result } : {}),
    ...(job.status === 'failed' ? { error: job.error } : {}),
  }
}

export function isFinished(status: JobStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'cancelled'
}
