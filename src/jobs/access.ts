import type { Principal } from '../auth/principal'
import type { JobRunner } from './runner'
import type { JobRecord } from './types'

/** Who asks for a job: its tenant, and which key with which tool scope. A Principal is one. */
export type JobViewer = Pick<Principal, 'tenant' | 'id' | 'tools'>

/** The jobs a key may poll, read the result of and cancel (REST /v1/jobs, get_job and cancel_job, MCP tasks). */
export interface JobAccess {
  /** The job, or undefined when there is none for this key (another tenant's, or not its to see). */
  get(viewer: JobViewer, id: string): Promise<JobRecord | undefined>
  /** Cancels the job if the key may see it; undefined when it may not, as get. */
  cancel(viewer: JobViewer, id: string): Promise<JobRecord | undefined>
}

/**
 * Whether a key may see a job of its own tenant: a key without a tool scope sees every job of the
 * tenant; a key limited to some tools sees only the jobs it started, so it never reads the result of
 * a call it could not have made (another key's read_file, say) nor stops one.
 */
export function mayAccessJob(viewer: JobViewer, job: JobRecord): boolean {
  return viewer.tools === undefined || job.principal.id === viewer.id
}

export function jobAccess(runner: Pick<JobRunner, 'get' | 'cancel'>): JobAccess {
  async function get(viewer: JobViewer, id: string): Promise<JobRecord | undefined> {
    const job = await runner.get(viewer.tenant, id)
    return job && mayAccessJob(viewer, job) ? job : undefined
  }
  return {
    get,
    async cancel(viewer, id) {
      if (!(await get(viewer, id))) return undefined
      return runner.cancel(viewer.tenant, id)
    },
  }
}
