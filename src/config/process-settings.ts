import { z } from 'zod'
import { booleanText, defineSettings, type SliceOf, variable } from '../core/settings'

export const processSettings = defineSettings({
  title: 'Process',
  variables: {
    TOOLPORT_LOG_LEVEL: variable({
      schema: z.enum(['debug', 'info', 'warn', 'error', 'silent']),
      default: 'info',
      description: 'How much the service logs; logs are JSON lines on stdout.',
    }),
    TOOLPORT_METRICS: variable({
      schema: booleanText,
      default: 'true',
      description: 'Node: `false` turns off `GET /metrics` (Prometheus text, behind a key when keys are configured).',
    }),
    TOOLPORT_SHUTDOWN_GRACE_SECONDS: variable({
      schema: z.coerce.number().int().min(0).max(3600),
      default: '25',
      description:
        'Node: on SIGTERM, calls in flight may finish for this long (new ones get 503), then the process exits 0.',
    }),
  },
  build: (values) => ({
    logLevel: values.TOOLPORT_LOG_LEVEL,
    metrics: values.TOOLPORT_METRICS,
    shutdownGraceSeconds: values.TOOLPORT_SHUTDOWN_GRACE_SECONDS,
  }),
})

export type ProcessSettings = SliceOf<typeof processSettings>
