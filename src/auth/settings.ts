import { z } from 'zod'
import { defineSettings, type SliceOf, variable } from '../core/settings'
import { parseApiKeys } from './keys'

export const authSettings = defineSettings({
  title: 'Keys and tenants',
  description:
    'With no keys configured, authentication is off, every caller is tenant `default`, and the server listens only on loopback. Each key belongs to a tenant, which sees only its own workspaces, files, jobs and approvals. Keys from every source below add up; the same key listed twice stops the service at start.',
  variables: {
    TOOLPORT_API_KEYS: variable({
      schema: z.string().optional(),
      secret: true,
      example: 'acme=key-acme-0123456789,key-default-0123456789',
      description:
        '`tenant=key,tenant=key`; a bare `key` belongs to tenant `default`. Keys need at least 16 characters.',
    }),
    TOOLPORT_KEYS_FILE: variable({
      schema: z.string().min(1).optional(),
      description:
        'A JSON file of keys: `[{ "tenant": "acme", "key": "…", "tools": ["read_file"], "require_approval": ["destructive"], "approver": false }]`; `tools` limits a key, `require_approval` and `approver` set up approvals (docs/contract.md). A key cannot both need approval and give it.',
    }),
    TOOLPORT_API_KEYS_SECRET: variable({
      schema: z.string().min(1).optional(),
      description:
        'Lambda: ARN of an SSM parameter or a Secrets Manager secret holding keys in either format above; read once per cold start.',
    }),
  },
  build(values) {
    return {
      /** The keys of TOOLPORT_API_KEYS; those of files and secrets are read by the runtime and added by the config. */
      apiKeys: values.TOOLPORT_API_KEYS ? parseApiKeys(values.TOOLPORT_API_KEYS) : [],
      keysFile: values.TOOLPORT_KEYS_FILE,
      keysSecret: values.TOOLPORT_API_KEYS_SECRET,
    }
  },
})

export type AuthSettings = SliceOf<typeof authSettings>
