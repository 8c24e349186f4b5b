import { z } from 'zod'
import { booleanText, ConfigError, defineSettings, type SliceOf, variable } from '../core/settings'

export interface S3Settings {
  bucket: string
  endpoint?: string
  region: string
  forcePathStyle: boolean
}

export const storageSettings = defineSettings({
  title: 'Storage',
  description:
    'Where workspaces, generated files, jobs and approvals are kept. S3 credentials come from the AWS SDK default chain (environment, profile, or the instance or Lambda role).',
  variables: {
    TOOLPORT_STORAGE: variable({
      schema: z.enum(['fs', 's3', 'memory', 'r2']),
      default: 'fs',
      runtimeDefaults: { lambda: 's3', workers: 'r2' },
      fixedOn: { workers: 'Workers store in the R2 bucket bound as TOOLPORT_BUCKET (infra/cloudflare/wrangler.toml)' },
      description:
        '`fs` (a local folder), `s3` (any S3-compatible bucket) or `memory` (forgets everything at exit); `r2` is the Workers binding.',
    }),
    TOOLPORT_DATA_DIR: variable({
      schema: z.string().min(1),
      default: './.toolport-data',
      runtimeDefaults: { lambda: '/tmp/toolport/data' },
      description: 'Folder of the `fs` storage driver.',
    }),
    TOOLPORT_S3_BUCKET: variable({
      schema: z.string().min(3).max(63).optional(),
      description: 'Bucket name; required with `TOOLPORT_STORAGE=s3`.',
    }),
    TOOLPORT_S3_ENDPOINT: variable({
      schema: z.url({ protocol: /^https?$/ }).optional(),
      description: 'Endpoint of an S3-compatible server (MinIO, R2, s3rver); unset: AWS.',
    }),
    TOOLPORT_S3_REGION: variable({
      schema: z.string().min(1).optional(),
      description: 'Region; unset: `AWS_REGION`, else `us-east-1`.',
    }),
    TOOLPORT_S3_FORCE_PATH_STYLE: variable({
      schema: booleanText,
      default: 'false',
      description: '`true` for MinIO and most self-hosted servers (bucket in the path, not the host name).',
    }),
  },
  build(values, { env, runtime }) {
    const driver = values.TOOLPORT_STORAGE
    if (driver === 'r2' && runtime !== 'workers') {
      throw new ConfigError('TOOLPORT_STORAGE=r2 exists only on Workers; use fs, s3 or memory')
    }
    let s3: S3Settings | undefined
    if (driver === 's3') {
      if (!values.TOOLPORT_S3_BUCKET) throw new ConfigError('TOOLPORT_S3_BUCKET is required when TOOLPORT_STORAGE=s3')
      s3 = {
        bucket: values.TOOLPORT_S3_BUCKET,
        region: values.TOOLPORT_S3_REGION ?? env.AWS_REGION ?? 'us-east-1',
        forcePathStyle: values.TOOLPORT_S3_FORCE_PATH_STYLE,
        ...(values.TOOLPORT_S3_ENDPOINT ? { endpoint: values.TOOLPORT_S3_ENDPOINT } : {}),
      }
    }
    return { driver, dataDir: values.TOOLPORT_DATA_DIR, s3 }
  },
})

export type StorageSettings = SliceOf<typeof storageSettings>
