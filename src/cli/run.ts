import { parseArgs, UsageError } from './args'
import { type AuditLogFactory, auditCommand } from './audit'
import { type CliIo, callCommand, type LocalTargetFactory } from './call'

export const usage = `toolport: tool execution for LLM platforms and CI

Usage:
  toolport serve [--port N] [--host ADDRESS]     start the HTTP service (configured by TOOLPORT_* variables)
  toolport call TOOL [options] [--PARAM VALUE …]   run one tool and print its JSON result
  toolport audit TENANT [--verify] [--action A] [--limit N] [--after N | --before N]
                                                 read (or verify) a tenant's audit log in the bucket

Call options:
  --url URL            a running toolport (or TOOLPORT_URL); without it the tool runs in this process
  --key KEY            bearer key for --url (or TOOLPORT_KEY)
  --workspace ID       workspace to work in (default: default)
  --input JSON         the tool's input as a JSON object
  --input-file PATH    the input from a file ("-" reads standard input)
  --out DIR            save the files the tool makes into DIR
  --PARAM VALUE        one input field, typed by the tool's schema (e.g. --path a.txt --start-line 3);
                       arrays and objects take JSON; these override --input

Audit reads the bucket the TOOLPORT_* variables name; the tenant _service holds refusals of keys that
name no tenant. --verify prints what the check found and exits 1 if the chain has a problem.

Exit status: 0 success, 1 the tool failed (the problem is printed on stderr), 2 wrong usage.
`

export interface CliDeps {
  local: LocalTargetFactory
  serve: (env: Record<string, string | undefined>) => Promise<void>
  audit: AuditLogFactory
}

export async function runCli(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  try {
    const args = parseArgs(argv)
    const command = args.positionals[0]
    if (command === undefined || command === 'help' || (args.options.has('help') && command !== 'call')) {
      io.stdout(usage)
      return command === undefined && !args.options.has('help') ? 2 : 0
    }
    if (command === 'call') return await callCommand(args, io, deps.local)
    if (command === 'audit') return await auditCommand(args, io, deps.audit)
    if (command === 'serve') {
      const port = args.options.get('port')?.at(-1)
      const host = args.options.get('host')?.at(-1)
      await deps.serve({
        ...io.env,
        ...(typeof port === 'string' ? { PORT: port } : {}),
        ...(typeof host === 'string' ? { HOST: host } : {}),
      })
      return 0
    }
    throw new UsageError(`Unknown command ${JSON.stringify(command)}.`)
  } catch (error) {
    if (!(error instanceof UsageError)) {
      io.stderr(`toolport: ${(error as Error).message}\n`)
      return 1
    }
    io.stderr(`toolport: ${error.message}\nRun "toolport help" for usage.\n`)
    return 2
  }
}
