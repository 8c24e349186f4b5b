import { isSchema, type JsonSchema, propertiesOf, requiredOf, typesOf } from '../core/json-schema'
import { type ParsedArgs, UsageError } from './args'

/**
 * Turns `--param value` options into tool input, typed by the tool's input schema: numbers and
 * booleans are converted, arrays and objects are read as JSON, a repeated option of an array of
 * scalars collects its values. `--start-line` and `--start_line` name the same field.
 */
export function inputFromOptions(
  schema: JsonSchema,
  options: ParsedArgs['options'],
  reserved: ReadonlySet<string>,
): Record<string, unknown> {
  const properties = new Map(propertiesOf(schema))
  const input: Record<string, unknown> = {}
  for (const [option, values] of options) {
    if (reserved.has(option)) continue
    const name = option.replaceAll('-', '_')
    const property = properties.get(name)
    if (!property) {
      const known = [...properties.keys()].map((key) => `--${key}`).join(', ') || '(none)'
      throw new UsageError(`Unknown parameter --${option}. This tool takes: ${known}.`)
    }
    Object.defineProperty(input, name, { value: convert(name, property, values), enumerable: true, writable: true })
  }
  return input
}

function convert(name: string, schema: JsonSchema, values: Array<string | true>): unknown {
  const types = typesOf(schema)
  const items = isSchema(schema.items) ? schema.items : undefined
  if (types.includes('array') && items && !['object', 'array'].some((type) => typesOf(items).includes(type))) {
    // --tag a --tag b, or one JSON array.
    if (values.length === 1 && typeof values[0] === 'string' && values[0].trimStart().startsWith('[')) {
      return parseJson(name, values[0])
    }
    return values.map((value) => scalar(name, items, value))
  }
  const value = values.at(-1) as string | true
  if (types.includes('array') || types.includes('object')) {
    if (value === true) throw new UsageError(`--${name} needs a JSON value.`)
    return parseJson(name, value)
  }
  return scalar(name, schema, value)
}

function scalar(name: string, schema: JsonSchema, value: string | true): unknown {
  const types = typesOf(schema)
  if (types.includes('boolean')) {
    if (value === true || value === 'true') return true
    if (value === 'false') return false
    throw new UsageError(`--${name} is true or false, not ${JSON.stringify(value)}.`)
  }
  if (value === true) throw new UsageError(`--${name} needs a value.`)
  if (types.includes('integer') || types.includes('number')) {
    const number = Number(value)
    if (value.trim() === '' || !Number.isFinite(number)) throw new UsageError(`--${name} must be a number.`)
    return number
  }
  return value
}

function parseJson(name: string, text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new UsageError(`--${name}: not valid JSON (${(error as Error).message}).`)
  }
}

/** One line per parameter, for `toolport call TOOL --help`. */
export function describeParameters(tool: string, schema: JsonSchema): string {
  const required = requiredOf(schema)
  const lines = propertiesOf(schema).map(([name, property]) => {
    const type = typesOf(property).join(' | ') || 'JSON'
    const flags = [type, required.has(name) ? 'required' : 'optional'].join(', ')
    const description = typeof property.description === 'string' ? ` ${property.description}` : ''
    return `  --${name} (${flags})${description}`
  })
  return `Parameters of ${tool}:\n${lines.join('\n') || '  (none)'}\n`
}
