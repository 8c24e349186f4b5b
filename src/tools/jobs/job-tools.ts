import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { isFinished, type JobRecord, jobStatusUrl, publicJob } from '../../jobs/types'
import { JobView, jobIdPattern } from '../../jobs/view'
import { defineTool, type Tool, type ToolContext } from '../tool'

// Long enough to span most calls a model waits for, short of the MCP SDK's default 60 s request timeout.
const maxWaitSeconds = 50
const pollMs = 500

const JobId = z.string().regex(jobIdPattern, 'must be a job_id as a 202 answer gave it').describe('The job_id.')

function jobsOf(context: Pick<ToolContext<'jobs'>, 'jobs'>) {
  if (!context.jobs) {
    throw new ToolError('unavailable', 'Jobs are not available here.', {
      notOffered: true,
      hint: 'Call the tool again without ?async=true.',
    })
  }
  return context.jobs
}

function notFound(id: string): ToolError {
  return new ToolError('not_found', `No job ${id} for this key.`, {
    hint: 'Jobs expire after a while; a key limited to some tools sees only the jobs it started, other keys every job of their tenant.',
    details: { field: 'job_id' },
  })
}

function view(job: JobRecord, context: Pick<ToolContext, 'origin'>) {
  const origin = context.origin ?? ''
  return publicJob(job, jobStatusUrl(origin, job.id))
}

/**
 * get_job: a long call (one that answered 202, or an MCP call handed over to a job) from any client that
 * can call tools, not only from clients that can GET a status_url. It waits up to wait_seconds for the
 * job to finish, so a model needs few calls.
 */
export const getJob = defineTool({
  name: 'get_job',
  title: 'Get job',
  description:
    'Get a long-running call started as a job (a 202 answer or a handed-over call): status, and result or error once finished. wait_seconds waits up to 50 s for it to finish.',
  effect: 'read',
  uses: ['jobs'],
  callTitle: (input) => `Job ${input.job_id}`,
  input: z.strictObject({
    job_id: JobId,
    wait_seconds: z
      .number()
      .int()
      .min(0)
      .max(maxWaitSeconds)
      .default(0)
      .describe('Wait up to this many seconds for the job to finish before answering (0-50). Default: 0.'),
  }),
  output: JobView,
  deadlineMs: (input) => (input.wait_seconds + 30) * 1000,
  async run(input, context) {
    const jobs = jobsOf(context)
    const until = Date.now() + input.wait_seconds * 1000
    let job = await jobs.get(context.principal, input.job_id)
    while (job && !isFinished(job.status) && Date.now() < until && !context.signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(0, until - Date.now()))))
      job = await jobs.get(context.principal, input.job_id)
    }
    if (!job) throw notFound(input.job_id)
    return view(job, context)
  },
})

export const cancelJob = defineTool({
  name: 'cancel_job',
  title: 'Cancel job',
  description: 'Cancel a queued or running job: its work is stopped. A finished job is answered unchanged.',
  effect: 'write',
  uses: ['jobs'],
  // Cancelling a cancelled or finished job changes nothing.
  hints: { idempotent: true },
  callTitle: (input) => `Cancel job ${input.job_id}`,
  input: z.strictObject({ job_id: JobId }),
  output: JobView,
  // What cancelling would do, cancelling nothing: a finished job stays as it is (nothing to approve).
  async dryRun(input, context) {
    const job = await jobsOf(context).get(context.principal, input.job_id)
    if (!job) throw notFound(input.job_id)
    return { job_id: job.id, tool: job.tool, status: job.status, cancels: !isFinished(job.status) }
  },
  preview: z.object({
    job_id: z.string(),
    tool: z.string(),
    status: z.string(),
    cancels: z.boolean().describe('False when the job has finished already: the call would change nothing.'),
  }),
  changesNothing: (preview) => (preview as { cancels?: boolean } | null)?.cancels === false,
  async run(input, context) {
    const job = await jobsOf(context).cancel(context.principal, input.job_id)
    if (!job) throw notFound(input.job_id)
    return view(job, context)
  },
})

/** The job tools: in every catalog for every key that may call any tool. */
export const jobTools: readonly Tool[] = [getJob, cancelJob]
