import { z } from 'zod'
import { booleanText, defineSettings, type SliceOf, variable } from '../core/settings'

export const auditSettings = defineSettings({
  title: 'Audit log and usage',
  description:
    "Security-relevant events (sources changed, approvals decided, calls, connections and keys refused, sign-ins) kept in the bucket as a hash-chained log per tenant, read with `GET /v1/audit`; each tenant's usage counted across the fleet, read with `GET /v1/usage` ([operations.md](operations.md#audit-log)).",
  variables: {
    TOOLPORT_AUDIT: variable({
      schema: booleanText,
      default: 'true',
      description:
        'Keep the audit log in the bucket (every event also goes to the log stream as an `audit` line). `false`: neither.',
    }),
    TOOLPORT_AUDIT_RETENTION_DAYS: variable({
      schema: z.coerce.number().int().min(0).max(36_500),
      default: '365',
      description:
        'Audit records older than this many days are removed (an `audit.pruned` record says so, so verification tells retention from tampering). `0`: kept forever.',
    }),
    TOOLPORT_AUDIT_INPUTS: variable({
      schema: booleanText,
      default: 'false',
      description:
        "Put a refused or approval-gated call's input (as JSON, at most 2,000 characters) in its audit record. Off by default: inputs may hold what the audit log should not.",
    }),
    TOOLPORT_USAGE_FLUSH_MS: variable({
      schema: z.coerce.number().int().min(50).max(3_600_000),
      default: '10000',
      description:
        "How often an instance writes the usage it counted to the bucket, where `GET /v1/usage` sums every instance's (it also writes at shutdown and, on Lambda, after each invocation).",
    }),
  },
  build: (values) => ({
    enabled: values.TOOLPORT_AUDIT,
    retentionDays: values.TOOLPORT_AUDIT_RETENTION_DAYS,
    inputs: values.TOOLPORT_AUDIT_INPUTS,
    usageFlushMs: values.TOOLPORT_USAGE_FLUSH_MS,
  }),
})

export type AuditSettings = SliceOf<typeof auditSettings>
