import { z } from 'zod'
import { type CatalogEntry, sourceEntry } from '../../catalog/entry'
import { ToolError } from '../../core/errors'
import { normalizeWorkspacePath } from '../../core/paths'
import { existingFileRecord, fileOutput } from '../../downloads/handoff'
import type { GeneratedFile } from '../../downloads/schemas'
import { checkProgram } from '../../sandbox/policy/policy'
import { egressLayers } from '../../tools/shell/egress-layers'
import { defineTool, type ToolContext } from '../../tools/tool'
import {
  checkDeclaredTools,
  DeclaredTool,
  declaredIdentity,
  Image,
  Mounts,
  maxToolsPerSource,
  SourceDescription,
  SourceId,
  TimeoutSeconds,
} from '../declared'
import type { SourceKind } from '../types'
import { excerpt } from '../upstream'
import { bindArgv } from './argv-template'
import { declaredSchemas } from './declared-schemas'

const hasPlaceholder = /\{input\./

/**
 * `command`: each tool runs a program in the sandbox over the call's workspace, with the input bound
 * into whole argv elements (never through a shell) or handed over as JSON on standard input.
 */
export const CommandManifest = z.strictObject({
  id: SourceId,
  kind: z.literal('command'),
  description: SourceDescription.optional(),
  image: Image.optional(),
  mounts: Mounts.optional(),
  tools: z
    .array(
      DeclaredTool.extend({
        argv: z
          .array(z.string().min(1).max(4096))
          .min(1)
          .max(256)
          .refine(
            (argv) => !hasPlaceholder.test(argv[0] ?? ''),
            'the program (argv[0]) must be fixed, not bound from input',
          ),
        stdin: z.enum(['none', 'json']).default('none'),
        timeout_seconds: TimeoutSeconds.default(60),
        /** Workspace paths (templates like "{input.output_path}") of files the tool makes: they come back with links. */
        output_files: z.array(z.string().min(1).max(1024)).max(20).optional(),
      }),
    )
    .min(1)
    .max(maxToolsPerSource)
    .superRefine(checkDeclaredTools),
})
export type CommandManifest = z.output<typeof CommandManifest>
type CommandTool = CommandManifest['tools'][number]

const FileFields = {
  files: { type: 'array', items: { type: 'object' }, description: 'Files the tool made, with download links.' },
  openaiFileResponse: { type: 'array', items: { type: 'string' } },
}

const defaultOutput = z.object({
  exit_code: z.number().int().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.boolean(),
  timed_out: z.boolean(),
})

export const commandKind: SourceKind<CommandManifest> = {
  kind: 'command',
  async load(manifest) {
    return { tools: manifest.tools.map((declared) => commandTool(manifest, declared)) }
  },
}

function commandTool(manifest: CommandManifest, declared: CommandTool): CatalogEntry {
  const schemas = declaredSchemas({
    name: declared.name,
    input_schema: declared.input_schema,
    output_schema: declared.output_schema ?? z.toJSONSchema(defaultOutput),
  })
  const published = declared.output_files ? withFiles(schemas.output.published) : schemas.output.published
  const plan = (input: Record<string, unknown>) => ({
    argv: bindArgv(declared.argv, input),
    stdin: declared.stdin === 'json' ? JSON.stringify(input) : undefined,
    outputFiles: declared.output_files
      ? bindArgv(declared.output_files, input).map((path) => normalizeWorkspacePath(path, { field: 'output_files' }))
      : [],
  })
  const tool = defineTool({
    ...declaredIdentity(declared),
    input: schemas.input.validator,
    output: z.record(z.string(), z.unknown()),
    // The sandbox runs it; the files it makes go back as links.
    uses: ['shell', 'http', 'links'],
    // Checkout and sync-back come on top of the command's own timeout.
    deadlineMs: () => (declared.timeout_seconds + 120) * 1000,
    callTitle: (input) =>
      `Run ${plan(input as Record<string, unknown>)
        .argv.join(' ')
        .slice(0, 80)}`,
    async run(input, context) {
      const { argv, stdin, outputFiles } = plan(input as Record<string, unknown>)
      const result = await execute(manifest, declared, context, argv, stdin)
      const output = declared.output_schema ? parsedStdout(result, declared, manifest.id) : plainResult(result)
      const checked = schemas.check(output, context.limits.maxResponseChars)
      if (outputFiles.length === 0) return checked
      const files: GeneratedFile[] = []
      for (const path of outputFiles) {
        if (await context.workspace.exists(path)) files.push(await existingFileRecord(context, path))
      }
      return { ...checked, ...fileOutput(files) }
    },
    async dryRun(input, context) {
      const { argv, stdin, outputFiles } = plan(input as Record<string, unknown>)
      return {
        argv,
        stdin: stdin === undefined ? null : `${stdin.length} characters of JSON`,
        working_directory: '/workspace',
        timeout_seconds: declared.timeout_seconds,
        output_files: await Promise.all(
          outputFiles.map(async (path) => ({ path, exists: await context.workspace.exists(path) })),
        ),
      }
    },
  })
  return sourceEntry(manifest.id, tool, { schemas: { input: schemas.input.published, output: published } })
}

async function execute(
  manifest: CommandManifest,
  declared: CommandTool,
  context: ToolContext<'shell'>,
  argv: string[],
  stdin: string | undefined,
) {
  const shell = context.shell
  if (!shell) {
    throw new ToolError('unavailable', 'No command sandbox is available on this server.', {
      hint: `${declared.name} runs a program in the sandbox, which this deployment does not have.`,
    })
  }
  checkProgram(argv[0] as string, shell.policy)
  // The same network as execute_command for the calling key: the operator's policy, narrowed by the key
  // (a key with egress none gives its command tools none). The manifest cannot open any of its own.
  return shell.execute({
    storage: context.workspace.storage,
    tenant: context.workspace.tenant,
    egress: egressLayers(shell, context.keyEgress, undefined),
    workspacePrefix: context.workspace.prefix,
    command: argv.join(' '),
    argv,
    ...(stdin !== undefined ? { stdin } : {}),
    cwd: '',
    ...(manifest.image ? { image: manifest.image } : {}),
    ...(manifest.mounts ? { mounts: manifest.mounts } : {}),
    timeoutMs: declared.timeout_seconds * 1000,
    signal: context.signal,
    onOutput: (stream, text) => context.emit({ type: 'output', stream, text }),
    span: context.span,
  })
}

type Run = Awaited<ReturnType<typeof execute>>

function plainResult(result: Run) {
  return {
    exit_code: result.exitCode,
    stdout: result.stdout.text,
    stderr: result.stderr.text,
    truncated: result.stdout.truncated || result.stderr.truncated,
    timed_out: result.timedOut,
  }
}

/** A tool that promises JSON on stdout: exit 0 and JSON, or a 502 with what stderr said. */
function parsedStdout(result: Run, declared: CommandTool, source: string): unknown {
  const stderr = result.stderr.text.trim() ? ` stderr: ${excerpt(result.stderr.text)}` : ''
  const failure = (problem: string) =>
    new ToolError(result.timedOut ? 'timeout' : 'connection', `${declared.name} ${problem}.${stderr}`, {
      hint: result.timedOut
        ? 'The program ran out of time; try less work per call.'
        : 'The program failed; check the input, and tell the operator if it persists.',
      details: { source, exit_code: result.exitCode },
    })
  if (result.timedOut) throw failure(`was stopped after ${declared.timeout_seconds} s`)
  if (result.exitCode !== 0) throw failure(`exited with code ${result.exitCode ?? 'none (killed)'}`)
  if (result.stdout.truncated) throw failure('wrote more output than the sandbox keeps')
  try {
    return JSON.parse(result.stdout.text)
  } catch {
    throw failure(`wrote output that is not the JSON it promises: ${excerpt(result.stdout.text)}`)
  }
}

function withFiles(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties as Record<string, unknown> | undefined) ?? {}
  return { ...schema, properties: { ...properties, ...FileFields } }
}
