import { z } from 'zod'
import { defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'

export const jobSettings = defineSettings({
  title: 'Jobs',
  description:
    'Calls made with `?async=true` (or that outlast `TOOLPORT_SYNC_TIMEOUT_SECONDS`) run as jobs, stored beside the workspaces and polled with `GET /v1/jobs/{id}`.',
  variables: {
    TOOLPORT_JOB_TTL_SECONDS: variable({
      schema: positiveInteger.min(60),
      default: '86400',
      description: 'Finished jobs and their results expire after this many seconds.',
    }),
    TOOLPORT_JOB_CONCURRENCY: variable({
      schema: positiveInteger.max(256),
      default: '4',
      description: 'Jobs running at once per instance.',
    }),
    TOOLPORT_JOB_QUEUE: variable({
      schema: z.coerce.number().int().min(0).max(100_000),
      default: '100',
      description: 'Jobs that may wait for a slot; past it, 429.',
    }),
    TOOLPORT_JOBS_PER_TENANT: variable({
      schema: z.coerce.number().int().min(0).max(100_000),
      default: '50',
      description:
        'Unfinished jobs (queued or running) one tenant may have at once; past it, 429. Counted across the fleet with `TOOLPORT_REDIS_URL`, per instance without it. `0`: no cap.',
    }),
    TOOLPORT_CALLBACK_ATTEMPTS: variable({
      schema: positiveInteger.max(10),
      default: '4',
      description: 'Attempts to POST a finished job to its `callback_url` until one answers 2xx.',
    }),
    TOOLPORT_CALLBACK_BACKOFF_MS: variable({
      schema: positiveInteger.max(600_000),
      default: '2000',
      description:
        'Wait before the second callback attempt in milliseconds, four times longer before each further one.',
    }),
  },
  build: (values) => ({
    ttlSeconds: values.TOOLPORT_JOB_TTL_SECONDS,
    concurrency: values.TOOLPORT_JOB_CONCURRENCY,
    queue: values.TOOLPORT_JOB_QUEUE,
    perTenant: values.TOOLPORT_JOBS_PER_TENANT,
    callbackAttempts: values.TOOLPORT_CALLBACK_ATTEMPTS,
    callbackBackoffMs: values.TOOLPORT_CALLBACK_BACKOFF_MS,
  }),
})

export type JobSettings = SliceOf<typeof jobSettings>
