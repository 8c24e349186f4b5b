import { z } from 'zod'
import { serviceAuditTenant } from '../core/audit'
import { effects } from '../core/effects'
import { type EgressPolicy, egressPolicySchema } from '../core/egress-policy'
import { isValidIdentifier } from '../core/paths'
import { ConfigError, describeIssues, splitList } from '../core/settings'

/** One API key: its tenant, and what the key may do. */
export interface ApiKey {
  tenant: string
  key: string
  /** When set, the key may call only these tools. */
  tools?: string[]
  /** Calls to tools with these effects wait for POST /v1/approvals/{id} (keys file: require_approval). */
  require_approval?: Array<(typeof effects)[number]>
  /** May decide its tenant's pending approvals (keys file: approver). */
  approver?: boolean
  /** Narrows the server's shell egress policy for this key (keys file: egress). */
  egress?: EgressPolicy
  /** May register, change and remove its tenant's tool sources (keys file: admin). */
  admin?: boolean
  /** Values a tenant's source manifests may refer to as { "secret": NAME } (keys file: secrets). */
  secrets?: Record<string, string>
}

const keyEntrySchema = z
  .object({
    tenant: z
      .string()
      .refine(isValidIdentifier, 'tenant must match [A-Za-z0-9._-]{1,64}')
      // Its admin would read every refused key's record (the audit chain of what names no tenant).
      .refine((tenant) => tenant !== serviceAuditTenant, `tenant ${serviceAuditTenant} is reserved for the audit log`),
    key: z.string().min(16, 'keys must have at least 16 characters'),
    tools: z.array(z.string()).min(1).optional(),
    require_approval: z
      .array(z.enum(effects))
      .optional()
      .describe('Effects whose calls need approval, e.g. ["destructive", "write"].'),
    approver: z.boolean().optional().describe("May decide its tenant's pending approvals (POST /v1/approvals/{id})."),
    egress: egressPolicySchema
      .optional()
      .describe(
        'Where this key\'s commands may connect: "none", "public" or { "allow": [...] }, within TOOLPORT_SHELL_EGRESS.',
      ),
    admin: z.boolean().optional().describe("May register, change and remove its tenant's tool sources (/v1/sources)."),
    secrets: z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'secret names look like API_TOKEN'),
        z.string().max(8192),
      )
      .optional()
      .describe('Values the tenant\'s source manifests may refer to as { "secret": NAME }; never shown.'),
  })
  .strict()
  .refine((entry) => !(entry.approver && entry.require_approval?.length), {
    message: 'a key cannot both need approval and give it (it could approve its own calls); use two keys',
    path: ['approver'],
  })

/** The keys file: a JSON list of { tenant, key, tools?, require_approval?, approver?, egress? }. */
export const keysFileSchema = z.array(keyEntrySchema)

/** TOOLPORT_API_KEYS: "tenant=key,tenant=key"; a bare key belongs to tenant "default". */
export function parseApiKeys(value: string): ApiKey[] {
  return splitList(value).map((entry) => {
    const separator = entry.indexOf('=')
    const candidate =
      separator === -1
        ? { tenant: 'default', key: entry }
        : { tenant: entry.slice(0, separator).trim(), key: entry.slice(separator + 1).trim() }
    const parsed = keyEntrySchema.safeParse(candidate)
    if (!parsed.success) throw new ConfigError(`TOOLPORT_API_KEYS: ${describeIssues(parsed.error)}`)
    return parsed.data
  })
}

/** Parses the JSON text of a keys file (TOOLPORT_KEYS_FILE, or the secret of TOOLPORT_API_KEYS_SECRET). */
export function parseKeysFile(text: string, source = 'TOOLPORT_KEYS_FILE'): ApiKey[] {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new ConfigError(`${source}: not valid JSON (${(error as Error).message})`)
  }
  const parsed = keysFileSchema.safeParse(json)
  if (!parsed.success) throw new ConfigError(`${source}: ${describeIssues(parsed.error)}`)
  return parsed.data
}
