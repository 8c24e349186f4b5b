import type { Principal } from '../auth/principal'
import { needsApproval } from '../caller/approvals'
import type { Catalog } from '../catalog/catalog'
import { type Effect, effects } from '../core/effects'
import { isSchema } from '../core/json-schema'
import type { ObjectStore } from '../storage/store'
import type { ToolServices } from '../tools/services'
import { describeEgress, egressLayers } from '../tools/shell/egress-layers'
import type { ToolLimits } from '../tools/tool'
import type { WorkspaceEntry } from '../workspace/workspace'
import { createWorkspace } from '../workspace/workspace'

// Enough to orient a model in a project; the rest is one list_files away.
const maxEntries = 200

const effectMeaning: Record<Effect, string> = {
  read: 'changes nothing',
  write: 'changes workspace files',
  external: 'reaches outside the service (network)',
  destructive: 'may lose data or run arbitrary commands',
}

export interface ContextDeps {
  catalog: Catalog
  storage: ObjectStore
  limits: ToolLimits
  /**
   * What the policies are read from: the sandbox (command policy, network), the readable variables,
   * the search provider.
   */
  services?: Pick<ToolServices, 'shell' | 'environment' | 'search'>
}

type ShellEgress = ReturnType<typeof describeEgress>

export interface ContextDocument {
  workspace: string
  /** With list_files: the workspace's first entries. A key that may not list files is not shown them. */
  files?: { entries: Array<Pick<WorkspaceEntry, 'path' | 'type' | 'size'>>; truncated: boolean }
  limits: {
    max_file_bytes: number
    max_response_chars: number
    shell_timeout_seconds?: { default: number; max: number }
  }
  /** Where execute_command's commands may connect, for this key. */
  shell_egress?: ShellEgress
  tools: Array<{ name: string; title: string; effect: Effect }>
  policies: {
    /** With execute_command: the programs a command may (allow) or may not (deny) run; absent: any. */
    shell?: { allow?: string[]; deny?: string[] }
    /** With get_env: the variables it may read. */
    readable_env?: string[]
    /** With web_search: whether a provider is configured, and which. */
    web_search?: { available: boolean; provider?: string }
    /** Effects whose calls of this key wait for an approver; empty: none. */
    approval: { required_for: Effect[]; approver: boolean }
  }
}

/**
 * What a platform can put in its system prompt so the model knows the workspace, the limits and its
 * tools before its first call (GET /v1/context, and MCP's context prompt): what this key may do.
 */
export async function buildContext(
  deps: ContextDeps,
  principal: Principal,
  workspaceId: string,
): Promise<ContextDocument> {
  const shellTimeout = shellTimeoutOf(deps.catalog)
  const allowed = (await deps.catalog.view(principal)).entries.map((entry) => entry.tool)
  const mayRun = allowed.some((tool) => tool.name === 'execute_command')
  // The listing is what list_files would show: a key without it learns no file names here either.
  const mayList = allowed.some((tool) => tool.name === 'list_files')
  const listing = mayList
    ? (
        await createWorkspace(deps.storage, principal.tenant, workspaceId).list('', {
          recursive: true,
          limit: maxEntries,
        })
      ).listing
    : undefined
  const shell = deps.services?.shell
  return {
    workspace: workspaceId,
    ...(listing
      ? {
          files: {
            entries: listing.entries.map(({ path, type, size }) => ({ path, type, size })),
            truncated: listing.truncated,
          },
        }
      : {}),
    limits: {
      max_file_bytes: deps.limits.maxFileBytes,
      max_response_chars: deps.limits.maxResponseChars,
      ...(shellTimeout && mayRun ? { shell_timeout_seconds: shellTimeout } : {}),
    },
    ...(shell && mayRun
      ? { shell_egress: describeEgress(shell, egressLayers(shell, principal.egress, undefined)) }
      : {}),
    tools: allowed.map((tool) => ({ name: tool.name, title: tool.title, effect: tool.effect })),
    policies: policiesOf(deps, principal, new Set(allowed.map((tool) => tool.name))),
  }
}

function policiesOf(deps: ContextDeps, principal: Principal, tools: ReadonlySet<string>): ContextDocument['policies'] {
  const { shell, environment, search } = deps.services ?? {}
  const policy = shell?.policy
  return {
    ...(tools.has('execute_command') && policy
      ? {
          shell: {
            ...(policy.allow ? { allow: [...policy.allow] } : {}),
            ...(policy.deny ? { deny: [...policy.deny] } : {}),
          },
        }
      : {}),
    ...(tools.has('get_env') ? { readable_env: Object.keys(environment ?? {}).sort() } : {}),
    ...(tools.has('web_search')
      ? { web_search: search ? { available: true, provider: search.name } : { available: false } }
      : {}),
    approval: {
      required_for: effects.filter((effect) => needsApproval(principal, { effect })),
      approver: principal.approver,
    },
  }
}

/** The shell's timeout as execute_command's own schema declares it, so the two cannot disagree. */
function shellTimeoutOf(catalog: Catalog): { default: number; max: number } | undefined {
  const shell = catalog.builtin('execute_command')
  const properties = shell ? catalog.inputSchema(shell).properties : undefined
  const timeout = isSchema(properties) ? properties.timeout_seconds : undefined
  if (!isSchema(timeout) || typeof timeout.default !== 'number' || typeof timeout.maximum !== 'number') return undefined
  return { default: timeout.default, max: timeout.maximum }
}

function fileTree(files: NonNullable<ContextDocument['files']>): string[] {
  return [
    files.entries.length === 0 ? 'Files: the workspace is empty.' : `Files (${files.entries.length} entries):`,
    ...files.entries.map((entry) => {
      const depth = entry.path.split('/').length - 1
      const name = entry.path.split('/').at(-1) ?? entry.path
      return `${'  '.repeat(depth + 1)}${entry.type === 'dir' ? `${name}/` : `${name} (${formatBytes(entry.size)})`}`
    }),
    ...(files.truncated ? [`  … more entries exist; list_files shows the rest.`] : []),
  ]
}

export function renderContext(document: ContextDocument): string {
  const { files, limits } = document
  const lines = [
    `You can use toolport tools on the workspace "${document.workspace}". Paths are relative to its root, separated by "/".`,
    '',
    ...(files ? [...fileTree(files), ''] : []),
    'Limits:',
    `- Files up to ${formatBytes(limits.max_file_bytes)} per read or write.`,
    `- Results up to ${limits.max_response_chars} characters; longer ones come back cut, with truncated: true and a hint.`,
    ...(limits.shell_timeout_seconds
      ? [
          `- execute_command stops a command after ${limits.shell_timeout_seconds.default} s unless timeout_seconds says otherwise (at most ${limits.shell_timeout_seconds.max}).`,
        ]
      : []),
    ...(document.shell_egress ? [egressLine(document.shell_egress)] : []),
    '',
    document.tools.length === 0 ? 'Tools: none are available to this key.' : 'Tools you may call (effect in brackets):',
    ...document.tools.map((tool) => `- ${tool.name} [${tool.effect}]: ${tool.title}`),
    ...effectsLine(document.tools),
    ...policyLines(document.policies),
  ]
  return `${lines.join('\n')}\n`
}

function egressLine(egress: ShellEgress): string {
  const { policy } = egress
  if (policy === 'unrestricted') return '- execute_command runs commands with the host network (process executor).'
  if (policy === 'none') return '- execute_command has no network: every connection a command opens fails.'
  const through =
    'through the proxy that HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name (set for every command; programs that ignore them cannot connect)'
  const limits =
    'limits' in egress && egress.limits
      ? ` At most ${egress.limits.connections} connections and ${formatBytes(egress.limits.bytes_in)} received per command.`
      : ''
  if (policy === 'public') {
    return `- execute_command may connect to public internet hosts ${through}; private, loopback and metadata addresses are refused.${limits}`
  }
  return `- execute_command may connect only to ${policy.allow.join(', ')} ${through}; other hosts are refused. A call's egress may narrow this list.${limits}`
}

function effectsLine(tools: ContextDocument['tools']): string[] {
  const used = (Object.entries(effectMeaning) as Array<[Effect, string]>).filter(([effect]) =>
    tools.some((tool) => tool.effect === effect),
  )
  if (used.length === 0) return []
  return ['', `Effects: ${used.map(([effect, meaning]) => `${effect} ${meaning}`).join('; ')}.`]
}

function policyLines(policies: ContextDocument['policies']): string[] {
  const lines: string[] = []
  const { shell, readable_env, web_search, approval } = policies
  if (shell) {
    const parts = [
      shell.allow ? `only these programs may run: ${shell.allow.join(', ')} (and shell builtins)` : '',
      shell.deny ? `these programs may not run: ${shell.deny.join(', ')}` : '',
    ].filter(Boolean)
    lines.push(`- Shell: ${parts.length > 0 ? parts.join('; ') : 'any program may run'}.`)
  }
  if (readable_env) {
    lines.push(
      readable_env.length > 0
        ? `- get_env may read: ${readable_env.join(', ')}.`
        : '- get_env may read no variables on this server.',
    )
  }
  if (web_search) {
    lines.push(
      web_search.available
        ? `- web_search is available (${web_search.provider}).`
        : '- web_search is not configured on this server; use web_fetch on known URLs.',
    )
  }
  lines.push(
    approval.required_for.length > 0
      ? `- Approval: your ${approval.required_for.join(', ')} calls wait for an approver (202 pending_approval); a call that would change nothing runs at once. Use ?dry_run=true to preview a call.`
      : '- Approval: none of your calls need one.',
  )
  return ['', 'Policies:', ...lines]
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, '')} KB`
  return `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MB`
}
