import { z } from 'zod'
import { ToolError } from '../core/errors'
import {
  Command,
  Effect,
  Headers,
  IdleSeconds,
  Image,
  Mounts,
  SecretName,
  SecretValue,
  SourceDescription,
  TimeoutSeconds,
} from './declared'

/**
 * Reference 002's plugin manifest, as its authors write it: `aiTools` entries (`name`, `method`,
 * `effect`, `description`) pointing at `rpc.methods`, which hold each method's `inputSchema` and
 * `outputSchema`. What toolport adds is optional: `id` (default: the file's or folder's name, or the
 * URL's), where the worker runs (`url` for a worker served over HTTP, else `command`, default: the
 * worker found in the plugin's folder), and the fields every source has. Checked in these terms, so an
 * error names the field as the author wrote it.
 */
const ReferenceMethod = z.strictObject({
  description: z.string().max(1024).optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
})

export const ReferencePluginManifest = z.strictObject({
  id: z.string().optional(),
  /** Optional: `http` with a url, `worker` otherwise (what toolport reads the plugin as). */
  kind: z.enum(['http', 'worker']).optional(),
  protocol: z.literal('jsonrpc').optional(),
  enabled: z.boolean().optional(),
  description: SourceDescription.optional(),
  rpc: z.strictObject({ methods: z.record(z.string().min(1).max(256), ReferenceMethod) }),
  aiTools: z
    .array(
      z.strictObject({
        name: z.string(),
        method: z.string().min(1).max(256),
        effect: Effect,
        description: z.string(),
        title: z.string().optional(),
      }),
    )
    .max(1000),
  // Where the worker runs: over HTTP (JSON-RPC POSTs) ...
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
  headers: Headers.optional(),
  // ... or as a local process in the sandbox (stdin and stdout).
  command: Command.optional(),
  env: z.record(SecretName, SecretValue).optional(),
  image: Image.optional(),
  mounts: Mounts.optional(),
  timeout_seconds: TimeoutSeconds.optional(),
  idle_seconds: IdleSeconds.optional(),
})

/** What the place a manifest comes from supplies when the manifest leaves it out. */
export interface ManifestDefaults {
  /** The id its file, folder or URL gives it. */
  id?: string
  /** The worker found beside a plugin's manifest in a dropped-in folder (node-sources.ts). */
  worker?: { command: string[]; mounts: Array<{ host: string; sandbox: string }> }
}

/** A manifest in toolport's shape, and how to name one of its fields as its author wrote it. */
export interface Translated {
  candidate: unknown
  /** The author's name for a field of the translated manifest (a dotted path). */
  authorField(field: string): string
}

const same: Translated['authorField'] = (field) => field

export function isReferenceShape(json: unknown): boolean {
  return isObject(json) && 'aiTools' in json
}

/**
 * The reference plugin shape as a `worker` source (or an `http` one with JSON-RPC when it names a
 * `url`); any other manifest gets only its defaults (the id). Throws a 400 naming the author's field.
 */
export function fromReferenceShape(json: unknown, defaults: ManifestDefaults = {}): Translated {
  if (!isReferenceShape(json)) {
    const withId =
      isObject(json) && json.id === undefined && defaults.id !== undefined ? { ...json, id: defaults.id } : json
    return { candidate: withId, authorField: same }
  }
  const parsed = ReferencePluginManifest.safeParse(json)
  if (!parsed.success) throw referenceIssue(parsed.error)
  const { aiTools, rpc, url, command, mounts, kind, protocol: _, ...rest } = parsed.data
  const names = Object.keys(rpc.methods)
  aiTools.forEach((entry, index) => {
    if (Object.hasOwn(rpc.methods, entry.method)) return
    throw new ToolError(
      'validation',
      `aiTools.${index}.method names ${JSON.stringify(entry.method)}, which rpc.methods does not declare.`,
      {
        hint: names.length
          ? `Point it at one of rpc.methods: ${names.slice(0, 20).join(', ')}; or declare ${entry.method} there with its inputSchema.`
          : `Declare ${entry.method} under rpc.methods with its inputSchema.`,
        details: { field: `aiTools.${index}.method` },
      },
    )
  })
  const tools = aiTools.map((entry) => {
    const method = rpc.methods[entry.method] as z.infer<typeof ReferenceMethod>
    return {
      name: entry.name,
      ...(entry.title !== undefined ? { title: entry.title } : {}),
      description: entry.description,
      effect: entry.effect,
      method: entry.method,
      input_schema: method.inputSchema,
      ...(method.outputSchema !== undefined ? { output_schema: method.outputSchema } : {}),
    }
  })
  const authorField = (field: string) => {
    const match = /^tools\.(\d+)(?:\.(.*))?$/.exec(field)
    if (!match) return field
    const index = Number(match[1])
    const rest = match[2]
    const method = aiTools[index]?.method ?? ''
    if (rest?.startsWith('input_schema')) return `rpc.methods.${method}.inputSchema${rest.slice('input_schema'.length)}`
    if (rest?.startsWith('output_schema'))
      return `rpc.methods.${method}.outputSchema${rest.slice('output_schema'.length)}`
    return `aiTools.${index}${rest ? `.${rest}` : ''}`
  }
  const id = rest.id ?? defaults.id
  const common = { ...rest, ...(id !== undefined ? { id } : {}), tools }
  if (url !== undefined || kind === 'http') {
    return { candidate: { ...common, kind: 'http', protocol: 'jsonrpc', url }, authorField }
  }
  const worker = command
    ? { command, ...(mounts ? { mounts } : {}) }
    : defaults.worker && { command: defaults.worker.command, mounts: [...defaults.worker.mounts, ...(mounts ?? [])] }
  if (!worker) {
    throw new ToolError('validation', 'The plugin manifest does not say where its worker runs.', {
      hint: 'Drop the manifest in a folder of its own beside its worker (worker.js, worker.mjs, worker.py, worker.jar or an executable named worker), or give command (the worker argv), or url (a worker served over HTTP).',
      details: { field: 'command' },
    })
  }
  return { candidate: { ...common, kind: 'worker', ...worker }, authorField }
}

/** The first issue of the reference shape, as a 400 naming the field as written. */
function referenceIssue(error: z.ZodError): ToolError {
  const issue = error.issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? error.issues[0]
  const path = issue?.path.map(String) ?? []
  if (issue?.code === 'unrecognized_keys') {
    const field = [...path, issue.keys[0] ?? ''].join('.')
    return new ToolError('validation', `The plugin manifest has a field toolport does not know: ${field}.`, {
      hint: `Remove ${field}; docs/sources.md#plugin-manifests lists what a plugin manifest may hold.`,
      details: { field },
    })
  }
  const field = path.join('.')
  return new ToolError(
    'validation',
    `${field ? `${field}: ` : ''}${issue?.message ?? 'the plugin manifest is not valid'}.`,
    {
      hint: `Fix ${field || 'the manifest'} and send it again; docs/sources.md#plugin-manifests describes the shape.`,
      details: field ? { field } : {},
    },
  )
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
