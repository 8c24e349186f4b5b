import type { AuditLog } from '../audit/audit-log'
import { type AuditAction, auditActions } from '../core/audit'
import { type ParsedArgs, stringOption, UsageError } from './args'
import type { CliIo } from './call'

/** Opens the audit log in the bucket the TOOLPORT_* settings name; injectable so tests use their own. */
export type AuditLogFactory = (env: Record<string, string | undefined>) => Promise<AuditLog>

const auditOptions = new Set(['verify', 'action', 'limit', 'after', 'before'])

/**
 * `toolport audit TENANT`: the operator's reading of a tenant's chain straight from the bucket, for
 * what no key reads over HTTP (`_service`, the refusals of keys that name no tenant) and for checking
 * a chain from outside the service. `--verify` exits 1 when the chain has a problem.
 */
export async function auditCommand(args: ParsedArgs, io: CliIo, open: AuditLogFactory): Promise<number> {
  const tenant = args.positionals[1]
  if (!tenant || args.positionals.length > 2) {
    throw new UsageError(
      'Name one tenant: toolport audit TENANT [--verify] [--action A] [--limit N] [--after N | --before N]',
    )
  }
  for (const name of args.options.keys()) {
    if (!auditOptions.has(name)) throw new UsageError(`Unknown option --${name} for toolport audit.`)
  }
  const log = await open(io.env)
  if (args.options.has('verify')) {
    const verification = await log.verify(tenant)
    io.stdout(`${JSON.stringify(verification, null, 2)}\n`)
    return verification.ok ? 0 : 1
  }
  const action = stringOption(args, 'action')
  if (action !== undefined && !auditActions.includes(action as AuditAction)) {
    throw new UsageError(`--action must be one of ${auditActions.join(', ')}.`)
  }
  const after = count(args, 'after')
  const before = count(args, 'before')
  if (after !== undefined && before !== undefined) throw new UsageError('Give --after or --before, not both.')
  const page = await log.page(tenant, {
    after,
    before,
    limit: count(args, 'limit') ?? 100,
    filter: { action: action as AuditAction | undefined },
  })
  io.stdout(`${JSON.stringify(page, null, 2)}\n`)
  return 0
}

function count(args: ParsedArgs, name: string): number | undefined {
  const value = stringOption(args, name)
  if (value === undefined) return undefined
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`--${name} takes a whole number, not ${JSON.stringify(value)}.`)
  return Number(value)
}
