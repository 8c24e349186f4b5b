import { z } from 'zod'
import type { EgressText } from '../../core/egress-policy'
import { ToolError } from '../../core/errors'
import { normalizeWorkspacePath } from '../../core/paths'
import { checkCommand } from '../../sandbox/policy/policy'
import type { DryRunContext } from '../tool'
import { describeEgress, egressLayers } from './egress-layers'

// execute_command's dry run: every check the call makes before it starts the sandbox, and what it
// would start with, without copying or running anything.

// A dry run counts what a command would see without walking a huge workspace to the end.
const maxCounted = 10_000

export const CommandPreview = z.object({
  command: z.string(),
  policy: z
    .object({
      verdict: z.literal('allowed').describe('A refused command answers 403 instead, as the call would.'),
      allow: z.array(z.string()).optional().describe("The server's allow list (TOOLPORT_SHELL_ALLOW), if any."),
      deny: z.array(z.string()).optional().describe("The server's deny list (TOOLPORT_SHELL_DENY), if any."),
    })
    .describe('The command policy applied to every program the command line runs.'),
  working_directory: z.string().describe('Where it would run, as the sandbox sees it (/workspace/…).'),
  timeout_seconds: z.number().int(),
  image: z.string().optional(),
  sandbox: z.object({
    executor: z.string(),
    limits: z.record(z.string(), z.string()).describe('What is enforced per command, in words.'),
  }),
  egress: z
    .object({
      policy: z
        .union([z.enum(['none', 'public', 'unrestricted']), z.object({ allow: z.array(z.string()) })])
        .describe('What the command could reach: the server, key and call policies combined.'),
      note: z.string().optional(),
      proxy: z.string().optional(),
      limits: z.record(z.string(), z.number()).optional(),
    })
    .describe('The network this call would get.'),
  sync: z
    .object({
      files: z.number().int().describe('Workspace files copied into the sandbox.'),
      bytes: z.number().int(),
      more: z.boolean().describe('True when the workspace has more files than were counted.'),
    })
    .describe('What the sandbox would start with; files it changes are saved back afterwards.'),
})

interface CommandInput {
  command: string
  working_directory: string
  timeout_seconds: number
  image?: string | undefined
  egress?: EgressText | undefined
}

export async function executeCommandDryRun(input: CommandInput, context: DryRunContext<'shell'>) {
  const { shell, workspace, keyEgress } = context
  if (!shell) {
    throw new ToolError('unavailable', 'No command sandbox is available on this server.', {
      hint: 'execute_command is disabled here; use the file tools, or ask the operator to install bubblewrap.',
    })
  }
  const cwd = normalizeWorkspacePath(input.working_directory, { allowRoot: true, field: 'working_directory' })
  await checkCommand(input.command, shell.policy)
  const layers = egressLayers(shell, keyEgress, input.egress)
  if (cwd !== '') {
    await workspace.list(cwd, { recursive: false, limit: 1 }).catch((error: unknown) => {
      throw new ToolError('validation', `working_directory "${cwd}" is not a folder of the workspace.`, {
        hint: 'Use an existing folder relative to the workspace root (list_files shows them), or omit working_directory.',
        details: { field: 'working_directory' },
        cause: error,
      })
    })
  }
  const { listing } = await workspace.list('', { recursive: true, limit: maxCounted })
  const files = listing.entries.filter((entry) => entry.type === 'file')
  const status = shell.status()
  return {
    command: input.command,
    policy: {
      verdict: 'allowed' as const,
      ...(shell.policy.allow ? { allow: [...shell.policy.allow] } : {}),
      ...(shell.policy.deny ? { deny: [...shell.policy.deny] } : {}),
    },
    working_directory: cwd === '' ? '/workspace' : `/workspace/${cwd}`,
    timeout_seconds: input.timeout_seconds,
    ...(input.image ? { image: input.image } : {}),
    sandbox: { executor: status.executor, limits: status.enforced },
    egress: describeEgress(shell, layers),
    sync: {
      files: files.length,
      bytes: files.reduce((sum, entry) => sum + entry.size, 0),
      more: listing.truncated,
    },
  }
}
