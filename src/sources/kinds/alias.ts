import { z } from 'zod'
import { builtinEntry, type CatalogEntry, sourceEntry } from '../../catalog/entry'
import { ToolError } from '../../core/errors'
import { isSchema, type JsonSchema, propertiesOf } from '../../core/json-schema'
import { defineTool, type Tool } from '../../tools/tool'
import { inputSchemaOf, outputSchemaOf } from '../../tools/tool-schemas'
import { Description, maxToolsPerSource, SourceDescription, SourceId, Title, ToolName } from '../declared'
import type { LoadedSource, SourceKind } from '../types'

/**
 * `alias`: another name, and other field names, for a built-in tool. An alias with the built-in's own
 * name adds spellings the built-in accepts (the compat packs: `outputPath` for `output_path`) without
 * changing what the catalog shows; any other name is a tool of its own that runs the built-in.
 */
export const AliasManifest = z.strictObject({
  id: SourceId,
  kind: z.literal('alias'),
  description: SourceDescription.optional(),
  tools: z
    .array(
      z.strictObject({
        name: ToolName,
        /** The built-in it runs. */
        tool: ToolName,
        title: Title.optional(),
        description: Description.optional(),
        /** Field renames, alias name → the built-in's name (top level). */
        rename: z.record(z.string().min(1).max(64), z.string().min(1).max(64)).optional(),
        /** Accept camelCase spellings of the built-in's snake_case fields, at every level. */
        accept_camel_case: z.boolean().default(false),
      }),
    )
    .min(1)
    .max(maxToolsPerSource),
})
export type AliasManifest = z.output<typeof AliasManifest>
type AliasDeclaration = AliasManifest['tools'][number]

export const aliasKind: SourceKind<AliasManifest> = {
  kind: 'alias',
  async load(manifest, context) {
    const tools: CatalogEntry[] = []
    const overrides = new Map<string, CatalogEntry>()
    const notes: string[] = []
    for (const declared of manifest.tools) {
      const target = context.builtins.get(declared.tool)
      // A built-in the operator switched off (TOOLPORT_TOOLS) takes its aliases with it.
      if (!target) {
        notes.push(`skipped ${declared.name}: this service does not offer ${declared.tool}`)
        continue
      }
      const alias = aliasTool(manifest.id, declared, target)
      if (declared.name === target.name) overrides.set(target.name, alias)
      else tools.push(alias)
    }
    if (tools.length === 0 && overrides.size === 0) throw new Error(notes.join('; '))
    const loaded: LoadedSource = { tools }
    if (overrides.size > 0) loaded.overrides = overrides
    if (notes.length > 0) loaded.notes = notes
    return loaded
  },
}

function aliasTool(source: string, declared: AliasDeclaration, target: Tool): CatalogEntry {
  const targetInput = inputSchemaOf(target)
  const rename = declared.rename ?? {}
  const toTarget = (input: unknown) =>
    mapFields(input, targetInput, targetInput, declared.accept_camel_case ? camelToSnake : undefined, rename)
  const input = z.preprocess(toTarget, target.input)
  // The built-in itself, accepting more spellings: same id, same listing.
  if (declared.name === target.name) {
    return builtinEntry(defineTool({ ...target, input }), {
      schemas: { input: targetInput, output: outputSchemaOf(target) },
    })
  }
  const tool = defineTool({
    ...target,
    name: declared.name,
    title: declared.title ?? target.title,
    description: declared.description ?? target.description,
    input,
  })
  return sourceEntry(source, tool, {
    aliasOf: target.name,
    schemas: { input: renamedSchema(targetInput, rename), output: outputSchemaOf(target) },
  })
}

function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
}

/**
 * The input with its field names made the built-in's, guided by the built-in's schema: a name the
 * schema knows is kept (openaiFileIdRefs is a real field), a renamed or camelCase one is mapped, and
 * anything else is left for the schema to refuse.
 */
function mapFields(
  value: unknown,
  schema: JsonSchema,
  root: JsonSchema,
  fold: ((name: string) => string) | undefined,
  rename: Record<string, string>,
): unknown {
  if (Array.isArray(value)) {
    const items = isSchema(schema.items) ? resolved(schema.items, root) : undefined
    return items && fold ? value.map((item) => mapFields(item, items, root, fold, {})) : value
  }
  if (typeof value !== 'object' || value === null) return value
  const properties = new Map(propertiesOf(schema))
  const out: Record<string, unknown> = {}
  // Which spelling gave each field: two spellings of one field are refused, never one silently dropped.
  const spelledAs = new Map<string, string>()
  for (const [key, item] of Object.entries(value)) {
    const name = properties.has(key) ? key : (rename[key] ?? (fold ? fold(key) : key))
    const earlier = spelledAs.get(name)
    if (earlier !== undefined) {
      throw new ToolError('validation', `${earlier} and ${key} are two spellings of ${name}; send one.`, {
        hint: `Keep ${name} (or ${earlier === name ? key : earlier}) and remove the other.`,
        details: { field: key },
      })
    }
    spelledAs.set(name, key)
    const child = properties.get(name)
    out[name] = child && fold ? mapFields(item, resolved(child, root), root, fold, {}) : item
  }
  return out
}

function resolved(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const match = typeof schema.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(schema.$ref) : null
  const defs = root.$defs
  if (match?.[1] && isSchema(defs) && isSchema(defs[match[1]])) return defs[match[1]] as JsonSchema
  const branches = (schema.anyOf ?? schema.oneOf) as unknown
  if (Array.isArray(branches)) return branches.find((branch) => isSchema(branch) && branch.type === 'object') ?? schema
  return schema
}

/** The built-in's input schema with the alias's names for the renamed top-level fields. */
function renamedSchema(schema: JsonSchema, rename: Record<string, string>): JsonSchema {
  const inverse = new Map(Object.entries(rename).map(([alias, original]) => [original, alias]))
  if (inverse.size === 0) return schema
  const properties = Object.fromEntries(propertiesOf(schema).map(([name, child]) => [inverse.get(name) ?? name, child]))
  const required = Array.isArray(schema.required)
    ? schema.required.map((name) => (typeof name === 'string' ? (inverse.get(name) ?? name) : name))
    : undefined
  return { ...schema, properties, ...(required ? { required } : {}) }
}
