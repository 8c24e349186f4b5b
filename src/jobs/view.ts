import { z } from 'zod'
import { recordIdPattern } from '../storage/json-records'

/** The public view of a job (publicJob), as REST, the job tools and MCP describe it. */
export const JobView = z.object({
  job_id: z.string(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  tool: z.string(),
  workspace: z.string(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  expires_at: z.string(),
  progress: z.object({ output_bytes: z.number() }).nullable(),
  attempt: z
    .number()
    .int()
    .describe(
      'Which run of the job this is: 0 while queued, 1 for the first; a run taken over after its instance died counts up.',
    ),
  max_attempts: z.number().int().describe('How many runs the job may have (more than 1 only with a queue engine).'),
  status_url: z.string().describe('Poll this URL (GET) until status is succeeded, failed or cancelled.'),
  hint: z.string().describe('What to do next, in one sentence.'),
  result: z.unknown().optional().describe('The tool output, once succeeded.'),
  error: z.record(z.string(), z.unknown()).nullable().optional().describe('The problem document, once failed.'),
})

/** A job is a stored record: its id is a record id. */
export const jobIdPattern = recordIdPattern
