import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { z } from 'zod'
import { type ParsedArgs, stringOption, UsageError } from './args'
import { describeParameters, inputFromOptions } from './params'
import { CallFailed, createTarget, type Target } from './target'

export interface CliIo {
  stdout(text: string): void
  stderr(text: string): void
  env: Record<string, string | undefined>
  readStdin(): Promise<string>
}

/** Builds the in-process target; injectable so tests can run it on their own storage. */
export type LocalTargetFactory = (env: Record<string, string | undefined>, tool: string) => Promise<Target>

export const callOptions = new Set(['url', 'key', 'workspace', 'input', 'input-file', 'out', 'help'])

const FileList = z.array(z.object({ url: z.string(), name: z.string() }))

/** `toolport call TOOL`: 0 on success, 1 when the tool or service refused (the problem goes to stderr). */
export async function callCommand(args: ParsedArgs, io: CliIo, local: LocalTargetFactory): Promise<number> {
  const tool = args.positionals[1]
  if (!tool) throw new UsageError('Name the tool to call: toolport call TOOL [--param value …]')
  const url = stringOption(args, 'url') ?? io.env.TOOLPORT_URL
  const key = stringOption(args, 'key') ?? io.env.TOOLPORT_KEY
  const target = url
    ? createTarget(
        url.replace(/\/+$/, ''),
        (input, init) => fetch(input, init),
        key,
        (input) => fetch(input),
      )
    : await local(io.env, tool)
  try {
    if (args.options.has('help')) {
      io.stdout(describeParameters(tool, await target.inputSchema(tool)))
      return 0
    }
    const input = { ...(await baseInput(args, io)) }
    const hasParams = [...args.options.keys()].some((name) => !callOptions.has(name))
    if (hasParams) Object.assign(input, inputFromOptions(await target.inputSchema(tool), args.options, callOptions))
    const answer = await target.call(tool, input, stringOption(args, 'workspace') ?? 'default')
    if (answer.status < 200 || answer.status > 299) throw new CallFailed(answer)
    io.stdout(`${JSON.stringify(answer.body, null, 2)}\n`)
    const out = stringOption(args, 'out')
    if (out) await saveFiles(answer.body, out, target, io)
    return 0
  } catch (error) {
    if (!(error instanceof CallFailed)) throw error
    const { body } = error.answer
    io.stderr(`${typeof body === 'string' ? body : JSON.stringify(body, null, 2)}\n`)
    return 1
  }
}

async function baseInput(args: ParsedArgs, io: CliIo): Promise<Record<string, unknown>> {
  const inline = stringOption(args, 'input')
  const file = stringOption(args, 'input-file')
  if (inline !== undefined && file !== undefined) throw new UsageError('Give --input or --input-file, not both.')
  if (inline === undefined && file === undefined) return {}
  const text = inline ?? (file === '-' ? await io.readStdin() : await readFile(file as string, 'utf8'))
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`The input is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError('The input must be a JSON object.')
  }
  return value as Record<string, unknown>
}

/** Downloads each file a tool made into the --out folder, under its own (base)name. */
async function saveFiles(output: unknown, folder: string, target: Target, io: CliIo): Promise<void> {
  const files = FileList.safeParse((output as { files?: unknown } | null)?.files)
  if (!files.success || files.data.length === 0) return
  await mkdir(folder, { recursive: true })
  for (const file of files.data) {
    // Only the last segment: a name from the service never writes outside the folder.
    const name = basename(file.name.replaceAll('\\', '/')).replace(/^\.+$/, '') || 'file'
    const path = join(folder, name)
    await writeFile(path, await target.download(file.url))
    io.stderr(`wrote ${path}\n`)
  }
}
