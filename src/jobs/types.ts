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
  /**
   * Which run of the job this is (1 for the first); a queue engine that takes over the job of a dead
   * instance starts attempt 2. Every write of a run is fenced by it: a run whose attempt is no longer
   * the record's never writes again. Absent on records of older versions: 1.
   */
  attempt?: number
  /** How many runs the engine allows (1 without a queue engine). */
  max_attempts?: number
  /** The W3C trace context of the call that made the job: its run is a span of that trace. */
  trace?: { traceparent?: string; tracestate?: string } | null
}

/**
 * One sentence for whoever holds the job (often a model): what to do next. A 202 that only names a
 * job id leaves a model with nothing it knows how to call.
 */
export function jobHint(job: Pick<JobRecord, 'id' | 'status' | 'tool'>): string {
  switch (job.status) {
    case 'queued':
    case 'running':
      return `${job.tool} is still running as job ${job.id}. Call get_job with {"job_id": "${job.id}", "wait_seconds": 50} (or GET its status_url) until status is succeeded, failed or cancelled; cancel_job stops it.`
    case 'succeeded':
      return `The job finished: its output is in result.`
    case 'failed':
      return `The job failed: error is the problem document, with a hint on what to change.`
    case 'cancelled':
      return `The job was cancelled before it finished; call ${job.tool} again to run it anew.`
  }
}

/** What GET /v1/jobs/{id} shows: everything but the internals. */
/** Where a job is polled: GET {origin}/v1/jobs/{id}, the one spelling of that URL. */
export function jobStatusUrl(origin: string, id: string): string {
  return `${origin}/v1/jobs/${id}`
}

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
    attempt: job.attempt ?? (job.started_at ? 1 : 0),
    max_attempts: job.max_attempts ?? 1,
    status_url: statusUrl,
    hint: jobHint(job),
    ...(job.status === 'succeeded' ? { result: job.result } : {}),
    ...(job.status === 'failed' ? { error: job.error } : {}),
  }
}

export function isFinished(status: JobStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'cancelled'
}
