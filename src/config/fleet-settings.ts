import { z } from 'zod'
import { defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'

export const fleetSettings = defineSettings({
  title: 'Fleet engine',
  description:
    'Unset, one process carries what outlives a call (its job queue, its limits) and shares the rest through the bucket. With `TOOLPORT_REDIS_URL`, Node instances share a Redis (or Valkey): jobs run on BullMQ (one instance takes each job; a dead instance\'s jobs are taken over), rate limits hold across the fleet, and catalog changes are published to every instance (docs/deploy.md, "Running a fleet").',
  variables: {
    TOOLPORT_REDIS_URL: variable({
      schema: z.url({ protocol: /^rediss?$/ }).optional(),
      description:
        'Node: `redis://[user:password@]host:port[/db]` or `rediss://` for TLS; Redis 6.2+ or Valkey. Unset: the single-process default.',
      secret: true,
    }),
    TOOLPORT_REDIS_PREFIX: variable({
      schema: z.string().regex(/^[A-Za-z0-9:_-]{1,64}$/),
      default: 'toolport',
      description: 'Prefix of every Redis key and channel, so fleets can share one Redis.',
    }),
    TOOLPORT_JOB_ATTEMPTS: variable({
      schema: positiveInteger.max(10),
      default: '3',
      description:
        'With Redis: runs a job may have. A job whose instance died (its lock lapsed) is run again as the next attempt; a job that fails as a call (an error answer) is not retried.',
    }),
  },
  build: (values) => ({
    redisUrl: values.TOOLPORT_REDIS_URL,
    redisPrefix: values.TOOLPORT_REDIS_PREFIX,
    jobAttempts: values.TOOLPORT_JOB_ATTEMPTS,
  }),
})

export type FleetSettings = SliceOf<typeof fleetSettings>
