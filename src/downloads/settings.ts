import { z } from 'zod'
import { defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'

export const downloadSettings = defineSettings({
  title: 'Download links',
  description:
    'Files a tool makes come back as expiring links: signed `/v1/files/{token}` URLs, or presigned URLs with S3 storage.',
  variables: {
    TOOLPORT_SIGNING_SECRET: variable({
      schema: z.string().min(32, 'use at least 32 characters (e.g. openssl rand -hex 32)').optional(),
      secret: true,
      description:
        'HMAC key of download tokens and job callback signatures (32+ characters, e.g. `openssl rand -hex 32`). Unset: a random secret per process, logged as a warning: links then die on restart and are not shared between instances.',
    }),
    TOOLPORT_LINK_TTL_SECONDS: variable({
      // Presigned S3 URLs may live at most 7 days.
      schema: positiveInteger.min(60).max(604_800),
      default: '3600',
      description: 'Lifetime of download links (60 to 604800), signed tokens and presigned S3 URLs alike.',
    }),
  },
  build: (values) => ({ signingSecret: values.TOOLPORT_SIGNING_SECRET, ttlSeconds: values.TOOLPORT_LINK_TTL_SECONDS }),
})

export type DownloadSettings = SliceOf<typeof downloadSettings>
