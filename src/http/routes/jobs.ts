import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi'
import { ToolError } from '../../core/errors'
import type { JobAccess } from '../../jobs/access'
import { jobStatusUrl, publicJob } from '../../jobs/types'
import { JobView, jobIdPattern } from '../../jobs/view'
import type { AppEnv } from '../env'
import { problemContent } from '../problem'
import { assertKnownQuery } from '../query'

// Built with zod-openapi's own z (which knows .openapi) from the jobs module's shape.
export const Job = z.object(JobView.shape).openapi('Job')

/** What any authenticated route may answer besides its own outcomes. */
export const commonErrors = {
  400: { description: 'A malformed id: the problem names it.', content: problemContent },
  401: { description: 'Missing or invalid bearer key.', content: problemContent },
  500: { description: 'Unexpected server error.', content: problemContent },
  503: { description: 'Storage is unavailable; retry later.', content: problemContent },
}
const JobId = z
  .string()
  .regex(jobIdPattern)
  .openapi({ param: { name: 'id', in: 'path' }, description: 'The job_id.' })

function notFound(id: string): ToolError {
  return new ToolError('not_found', `No job ${id} for this key.`, {
    hint: 'Jobs expire after a while and are visible only to the tenant that started them.',
  })
}

/** GET /v1/jobs/{id}, as the OpenAPI document describes it. */
export const getJob = createRoute({
  method: 'get',
  path: '/v1/jobs/{id}',
  operationId: 'get_job',
  summary: 'Get job',
  description:
    'Poll a job started with ?async=true or by a call that ran past the synchronous time limit. Repeat every few seconds until status is succeeded (read result), failed (read error) or cancelled.',
  tags: ['jobs'],
  security: [{ bearerAuth: [] }],
  request: { params: z.object({ id: JobId }) },
  responses: {
    200: { description: 'The job.', content: { 'application/json': { schema: Job } } },
    ...commonErrors,
    404: { description: 'No such job for this tenant (or it expired).', content: problemContent },
  },
})
/** DELETE /v1/jobs/{id}. */
export const cancelJob = createRoute({
  method: 'delete',
  path: '/v1/jobs/{id}',
  operationId: 'cancel_job',
  summary: 'Cancel job',
  description:
    'Cancel a queued or running job: its sandbox or browser work is killed. Finished jobs are returned unchanged.',
  tags: ['jobs'],
  security: [{ bearerAuth: [] }],
  request: { params: z.object({ id: JobId }) },
  responses: {
    200: { description: 'The job after cancelling.', content: { 'application/json': { schema: Job } } },
    ...commonErrors,
    404: { description: 'No such job for this tenant.', content: problemContent },
  },
})
/** GET /v1/jobs/{id} (get_job, for polling) and DELETE /v1/jobs/{id} (cancel_job). */
export function registerJobRoutes(app: OpenAPIHono<AppEnv>, jobs: JobAccess): void {
  app.openapi(getJob, async (context) => {
    assertKnownQuery(context.req.url, [])
    const { id } = context.req.valid('param')
    const job = await jobs.get(context.get('principal'), id)
    if (!job) throw notFound(id)
    return context.json(publicJob(job, jobStatusUrl(context.get('linkOrigin'), job.id)) as never, 200)
  })
  app.openapi(cancelJob, async (context) => {
    assertKnownQuery(context.req.url, [])
    const { id } = context.req.valid('param')
    const job = await jobs.cancel(context.get('principal'), id)
    if (!job) throw notFound(id)
    return context.json(publicJob(job, jobStatusUrl(context.get('linkOrigin'), job.id)) as never, 200)
  })
}
