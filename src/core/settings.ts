import { z } from 'zod'

/**
 * Settings are declared by the module that uses them (its `settings.ts`): each variable with its
 * schema, default and description, and a `build` that turns the parsed values into the slice the
 * module receives. src/config composes the declarations; docs/configuration.md is generated from
 * them, so a setting cannot exist undocumented.
 */
export type Runtime = 'node' | 'lambda' | 'workers'

export const runtimes: readonly Runtime[] = ['node', 'lambda', 'workers']

export type Environment = Readonly<Record<string, string | undefined>>

/** A bad setting: the service does not start, and the message names the variable to fix. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

export interface Variable<T = unknown> {
  /** Parses the variable's text; an unset or empty variable is parsed as its default (or undefined). */
  schema: z.ZodType<T>
  /** What it does, for docs/configuration.md: one or two sentences. */
  description: string
  /** The default as the text a variable would hold; omit when unset means something of its own. */
  default?: string
  /** Defaults that differ per runtime (e.g. Lambda's storage is s3). */
  runtimeDefaults?: Partial<Record<Runtime, string>>
  /**
   * Runtimes on which the variable is fixed to its (runtime) default, with the reason: a value set
   * there is ignored with a warning in the log instead of half-working.
   */
  fixedOn?: Partial<Record<Runtime, string>>
  /** A value to show in the docs, e.g. "60/min". */
  example?: string
  /** Never logged or shown; the docs say "secret". */
  secret?: boolean
}

type Variables = Record<string, Variable>

export type ValuesOf<V extends Variables> = { [K in keyof V]: V[K] extends Variable<infer T> ? T : never }

export interface BuildContext {
  runtime: Runtime
  /** The whole environment, for settings that read variables named by another (TOOLPORT_ENV_ALLOW). */
  env: Environment
}

export interface SettingsDeclaration<V extends Variables = Variables, Slice = unknown> {
  /** Section title in docs/configuration.md. */
  title: string
  /** A paragraph for the docs, above the table. */
  description?: string
  variables: V
  /** The module's slice; throws ConfigError for values that do not fit together. */
  build(values: ValuesOf<V>, context: BuildContext): Slice
}

export type SliceOf<D> = D extends SettingsDeclaration<Variables, infer Slice> ? Slice : never

/** A typed identity function: a declaration is plain data. */
export function defineSettings<V extends Variables, Slice>(
  declaration: SettingsDeclaration<V, Slice>,
): SettingsDeclaration<V, Slice> {
  return declaration
}

/** A typed identity function for one variable, so `schema` fixes the value's type. */
export function variable<T>(declaration: Variable<T>): Variable<T> {
  return declaration
}

/** The text a variable is parsed from on a runtime: its value, else its runtime default, else its default. */
export function effectiveText(
  name: string,
  declaration: Variable,
  env: Environment,
  runtime: Runtime,
  warn: (message: string) => void,
): string | undefined {
  const fallback = declaration.runtimeDefaults?.[runtime] ?? declaration.default
  const given = env[name]
  const set = given !== undefined && given !== ''
  const fixed = declaration.fixedOn?.[runtime]
  if (fixed !== undefined) {
    if (set && given !== fallback) warn(`${name} is ignored on ${runtime}: ${fixed}`)
    return fallback
  }
  return set ? given : fallback
}

/** Parses one declaration's variables from the environment and builds its slice. */
export function loadSettings<V extends Variables, Slice>(
  declaration: SettingsDeclaration<V, Slice>,
  env: Environment,
  runtime: Runtime,
  warn: (message: string) => void = () => {},
): Slice {
  const values: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [name, entry] of Object.entries(declaration.variables)) {
    const parsed = entry.schema.safeParse(effectiveText(name, entry, env, runtime, warn))
    if (parsed.success) values[name] = parsed.data
    else problems.push(`${name}: ${describeIssues(parsed.error)}`)
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`)
  return declaration.build(values as ValuesOf<V>, { runtime, env })
}

/** A zod failure as one line: each issue with its path. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ')
}

/** The items of a comma list, trimmed, empty ones dropped: "a, b,,c" is ["a", "b", "c"]. */
export function splitList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
}

/**
 * The one schema of comma-list settings: each item must pass `item` (whose output is kept, so it may
 * normalise), and a refusal names every bad item and what a good one looks like ("not a program name:
 * a b (use names like git, python3)").
 */
export function commaList(item: z.ZodType<string, string>, refusal: string, example: string) {
  return z
    .string()
    .optional()
    .transform((text, context) => {
      const parsed = splitList(text).map((entry) => ({ entry, result: item.safeParse(entry) }))
      const bad = parsed.filter(({ result }) => !result.success).map(({ entry }) => entry)
      if (bad.length > 0) context.addIssue({ code: 'custom', message: `${refusal}: ${bad.join(', ')} (${example})` })
      return parsed.flatMap(({ result }) => (result.success ? [result.data] : []))
    })
    .meta({ values: 'comma list' })
}

/** "true"/"false" and the usual spellings. */
export const booleanText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes')
  .meta({ values: '`true` or `false`' })

export const positiveInteger = z.coerce.number().int().positive()

/** A URL without its trailing slashes, so "${url}/v1/..." never doubles one. */
export const httpUrl = z
  .url({ protocol: /^https?$/ })
  .transform((url) => url.replace(/\/+$/, ''))
  .meta({ values: 'http(s) URL' })
