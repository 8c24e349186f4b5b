import { z } from 'zod'
import { effects } from '../core/effects'
import { ToolError } from '../core/errors'
import { type TextKind, unpublishableCharacter } from './published-text'
import { compileSchema } from './schema-compiler'

// The pieces every kind of manifest is made of. Objects are strict: a field the schema does not know is
// refused with its name, never silently dropped.

export const sourceIdPattern = /^[a-z][a-z0-9-]{0,31}$/

/**
 * The source id a file or folder name gives (`fan.summer.excel` → `fan-summer-excel`): lower case,
 * runs of other characters as one "-", starting with a letter, at most 32 characters. A name with no
 * letter gives itself back, which the id check then refuses naming it.
 */
export function sourceIdFromName(name: string): string {
  const id = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+/g, '-')
    .slice(0, 32)
    .replace(/-+$/, '')
  return sourceIdPattern.test(id) ? id : name
}

export const SourceId = z
  .string()
  .regex(sourceIdPattern, 'must start with a-z and have at most 32 characters from a-z, 0-9 and "-"')

/** A tool name every platform accepts (OpenAI, Anthropic, Gemini, MCP, OpenAPI operationId). */
export const toolNamePattern = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/

export const ToolName = z
  .string()
  .regex(toolNamePattern, 'must start with a letter or "_" and have at most 64 letters, digits, "_" or "-"')

export const Effect = z.enum(effects)

/** Text every platform will take in a tool list (published-text.ts): a manifest holding other is refused. */
const publishableText = (kind: TextKind) => (text: string, context: z.RefinementCtx) => {
  const bad = unpublishableCharacter(text, kind)
  if (bad) {
    context.addIssue({
      code: 'custom',
      message: `holds ${bad}, which platforms may refuse${kind === 'line' ? ' (a title is one line)' : ''}`,
    })
  }
}

/** A tool's title: one line. */
export const Title = z.string().min(1).max(100).superRefine(publishableText('line'))
/** A tool's description: line breaks and tabs allowed, no other control characters. */
export const Description = z.string().min(1).max(1024).superRefine(publishableText('text'))
/** A source's own description (may be empty). */
export const SourceDescription = z.string().max(1024).superRefine(publishableText('text'))

/** A header or variable value: literal text, or `{ "secret": NAME }` resolved when the source loads. */
export const SecretName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be a variable name like API_TOKEN')
export const SecretValue = z.union([z.string().max(8192), z.strictObject({ secret: SecretName })])
export type SecretValue = z.infer<typeof SecretValue>

const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, 'must be an HTTP header name')
export const Headers = z.record(headerName, SecretValue).refine((headers) => Object.keys(headers).length <= 32, {
  message: 'at most 32 headers',
})

/** A JSON Schema object as declared; compiled (and so checked) by compileSchema. */
export const JsonSchemaObject = z.record(z.string(), z.unknown())

export const TimeoutSeconds = z.number().int().min(1).max(3600)

/** What a source whose program runs in the sandbox declares about it (stdio MCP servers, workers). */
const AbsolutePath = z
  .string()
  .regex(/^\/[^\0]*$/, 'must be an absolute path')
  .max(1024)
/** argv of a program run in the sandbox. */
export const Command = z.array(z.string().min(1).max(4096)).min(1).max(64)
/** Container image the program runs in (container executor only). */
export const Image = z.string().min(1).max(255)
/** Host folders the program sees read-only (operator sources only): its installed code. */
export const Mounts = z.array(z.strictObject({ host: AbsolutePath, sandbox: AbsolutePath })).max(8)
/** A program idle this long is stopped, and started again by the next call. */
export const IdleSeconds = z.number().int().min(5).max(86_400)

/** The most of an upstream's answer read (http and openapi sources); past it, 502. */
export const MaxResponseBytes = z
  .number()
  .int()
  .min(1024)
  .max(64 * 1024 * 1024)
  .default(4 * 1024 * 1024)

/** The name and description every tool a manifest declares carries, as declared. */
export function declaredIdentity(declared: {
  name: string
  title?: string | undefined
  description: string
  effect: z.infer<typeof Effect>
}) {
  return {
    name: declared.name,
    title: declared.title ?? declared.name,
    description: declared.description,
    effect: declared.effect,
  }
}

/** A tool a manifest declares with its own schemas (http and command sources). */
export const DeclaredTool = z.strictObject({
  name: ToolName,
  title: Title.optional(),
  description: Description,
  effect: Effect,
  input_schema: JsonSchemaObject,
  output_schema: JsonSchemaObject.optional(),
})
export type DeclaredTool = z.infer<typeof DeclaredTool>

/** At most this many tools per source: a catalog a model can still choose from, a document a client can load. */
export const maxToolsPerSource = 1000

/**
 * Checks what zod's shapes cannot: each declared schema compiles, and tool names are unique. Used as
 * a superRefine on a kind's tools array, so a bad schema is refused naming its field.
 */
export function checkDeclaredTools(
  tools: ReadonlyArray<{ name: string; input_schema: unknown; output_schema?: unknown }>,
  context: z.RefinementCtx,
): void {
  const seen = new Set<string>()
  tools.forEach((tool, index) => {
    if (seen.has(tool.name)) {
      context.addIssue({ code: 'custom', path: [index, 'name'], message: `${tool.name} is declared twice` })
    }
    seen.add(tool.name)
    for (const key of ['input_schema', 'output_schema'] as const) {
      if (tool[key] === undefined) continue
      try {
        compileSchema(tool[key], key, { root: 'object' })
      } catch (error) {
        if (!(error instanceof ToolError)) throw error
        const field = String(error.details?.field ?? key)
        context.addIssue({
          code: 'custom',
          path: [index, ...field.split('.')],
          message: error.message.slice(field.length + 1).replace(/\.$/, ''),
        })
      }
    }
  })
}

/** Resolves `{ "secret": NAME }` values; a missing secret stops the source with a reason naming it. */
export function resolveSecrets(
  values: Readonly<Record<string, SecretValue>> | undefined,
  secret: (name: string) => string | undefined,
  what: string,
): Record<string, string> {
  const resolved: Record<string, string> = {}
  for (const [name, value] of Object.entries(values ?? {})) {
    if (typeof value === 'string') {
      resolved[name] = value
      continue
    }
    const found = secret(value.secret)
    if (found === undefined) throw new Error(`the secret ${value.secret} (for the ${what} ${name}) is not set`)
    resolved[name] = found
  }
  return resolved
}
