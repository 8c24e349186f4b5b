import { z } from 'zod'
import { egressTextSchema } from '../../core/egress-policy'
import { ToolError } from '../../core/errors'
import { normalizeWorkspacePath } from '../../core/paths'
import type { CallAccount } from '../../core/usage'
import { isImageReference } from '../../sandbox/executors/container-image'
import { checkCommand } from '../../sandbox/policy/policy'
import type { ShellResult, ShellService } from '../../sandbox/shell-service'
import { defineTool } from '../tool'
import { CommandPreview, executeCommandDryRun } from './dry-run'
import { EgressResult, egressLayers, egressOutcome } from './egress-layers'
import { fitTexts } from './fit'

const FileChange = z.object({
  path: z.string(),
  change: z.enum(['added', 'modified', 'deleted']),
  size: z.number().int().optional(),
})

// Most changed-file entries one response lists; the count is always complete.
const maxListedChanges = 200
const responseOverhead = 3_000
/** Time for checkout and sync-back on top of timeout_seconds before the per-call deadline ends the call. */
const deadlineMarginSeconds = 120

export const executeCommand = defineTool({
  name: 'execute_command',
  title: 'Execute command',
  description:
    'Run a shell command (/bin/sh -c) in a fresh sandbox whose /workspace is the workspace; files changed there are saved back. Network only as the egress policy allows (GET /v1/context). Returns exit_code, stdout, stderr, files_changed.',
  effect: 'destructive',
  uses: ['shell'],
  callTitle: (input) => `Run: ${shorten(input.command.replace(/\s+/g, ' ').trim(), 60)}`,
  input: z.strictObject({
    command: z
      .string()
      .min(1)
      .max(65_536)
      .refine((command) => !command.includes('\u0000'), 'must not contain NUL characters')
      .describe('Shell command line, run with /bin/sh -c in /workspace.'),
    working_directory: z
      .string()
      .max(1024)
      .default('')
      .describe('Folder relative to the workspace root to run in. Default: the root.'),
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(3600)
      .default(30)
      .describe('Kill the command after this many seconds (1-3600). Default: 30.'),
    image: z
      .string()
      .max(255)
      .refine(isImageReference, 'must be an image reference such as python:3.12')
      .optional()
      .describe(
        "Container image to run in, from the server's allow-list (container sandbox only). Default: the server's image.",
      ),
    egress: egressTextSchema
      .optional()
      .describe(
        'Network for this command, within what the key may reach: "none", "public" or { "allow": ["host", "host:port", "*.host", "@npm"] }. Default: all the key may reach (GET /v1/context).',
      ),
  }),
  output: z.object({
    exit_code: z
      .number()
      .int()
      .nullable()
      .describe('Exit status; null when the command was killed (timeout or limit).'),
    stdout: z.string(),
    stderr: z.string(),
    output: z.string().describe('stdout and stderr interleaved in the order they were written.'),
    truncated: z.boolean().describe('True when some output was left out to respect the size limits.'),
    timed_out: z.boolean(),
    duration_ms: z.number().int(),
    files_changed: z.array(FileChange).describe('Workspace files the command added, modified or deleted.'),
    files_changed_count: z.number().int(),
    skipped_files: z.array(z.object({ path: z.string(), reason: z.string() })).optional(),
    limit_exceeded: z.string().optional().describe('The sandbox limit that stopped the command, if any.'),
    egress: EgressResult.optional(),
    hint: z.string().optional(),
  }),
  // The per-call deadline must not cut the command's own timeout short: checkout and sync-back get a margin.
  deadlineMs: (input) => (input.timeout_seconds + deadlineMarginSeconds) * 1000,
  dryRun: executeCommandDryRun,
  preview: CommandPreview,
  async run(input, { shell, workspace, limits, signal, emit, keyEgress, span, account }) {
    const available = requireShell(shell)
    const cwd = normalizeWorkspacePath(input.working_directory, { allowRoot: true, field: 'working_directory' })
    await checkCommand(input.command, available.policy)
    const layers = egressLayers(available, keyEgress, input.egress)
    const result = await available.execute({
      storage: workspace.storage,
      tenant: workspace.tenant,
      egress: layers,
      workspacePrefix: workspace.prefix,
      command: input.command,
      cwd,
      ...(input.image ? { image: input.image } : {}),
      timeoutMs: input.timeout_seconds * 1000,
      signal,
      onOutput: (stream, text) => emit({ type: 'output', stream, text }),
      span,
    })
    const listed = result.filesChanged.slice(0, maxListedChanges)
    const egress = result.egress ? egressOutcome(result.egress) : undefined
    if (account) tellAccount(account, result)
    const base = {
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      duration_ms: result.durationMs,
      files_changed: listed,
      files_changed_count: result.filesChanged.length,
      ...(result.skipped.length > 0 ? { skipped_files: result.skipped.slice(0, 50) } : {}),
      ...(result.limitExceeded ? { limit_exceeded: result.limitExceeded } : {}),
      ...(egress ? { egress: egress.result } : {}),
    }
    const budget = limits.maxResponseChars - responseOverhead - JSON.stringify(base).length
    const fitted = fitTexts([result.stdout.text, result.stderr.text, result.output.text], budget)
    const [stdout = '', stderr = '', output = ''] = fitted.texts
    const truncated =
      fitted.cut ||
      result.stdout.truncated ||
      result.stderr.truncated ||
      result.output.truncated ||
      listed.length < result.filesChanged.length
    const hints = [
      result.timedOut
        ? `The command was killed after ${input.timeout_seconds} s; raise timeout_seconds or do less per call.`
        : '',
      result.limitExceeded ? `The sandbox stopped the command: ${result.limitExceeded} limit reached.` : '',
      result.discarded
        ? 'Nothing was saved back: the workspace is as it was before the call (a command that leaves it past a limit keeps none of its changes). Make less, or delete what you do not need, within one call.'
        : '',
      truncated
        ? 'Output was cut; redirect it to a file (cmd > out.txt) and read that with read_file line ranges.'
        : '',
      egress?.hint ?? '',
    ].filter(Boolean)
    return { ...base, stdout, stderr, output, truncated, ...(hints.length > 0 ? { hint: hints.join(' ') } : {}) }
  },
})

/** What the run used (its cgroups' CPU and memory, its egress bytes) and which hosts its egress refused. */
function tellAccount(account: CallAccount, result: ShellResult): void {
  account.used({
    ...(result.usage?.cpuSeconds !== undefined ? { sandboxCpuSeconds: result.usage.cpuSeconds } : {}),
    ...(result.usage?.peakMemoryBytes !== undefined ? { sandboxPeakMemoryBytes: result.usage.peakMemoryBytes } : {}),
    ...(result.egress ? { egressBytesOut: result.egress.bytesOut, egressBytesIn: result.egress.bytesIn } : {}),
  })
  for (const host of result.egress?.hosts ?? []) {
    if (host.refused > 0) account.refused('egress', host.host, host.reason ?? 'not allowed by the egress policy')
  }
}

function requireShell(shell: ShellService | undefined): ShellService {
  if (shell) return shell
  throw new ToolError('unavailable', 'No command sandbox is available on this server.', {
    hint: 'execute_command is disabled here; use the file tools, or ask the operator to install bubblewrap.',
  })
}

function shorten(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length)}…`
}
