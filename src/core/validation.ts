import type { ZodError } from 'zod'
import { closestName } from './closest-name'
import { ToolError } from './errors'
import { type JsonSchema, propertyNamesAt } from './json-schema'
import { referenceField } from './reference-names'

/**
 * Turns a zod failure into one validation error naming the first failing field. With the published
 * input schema, an unknown field is named with the known one it most likely meant.
 */
export function validationError(error: ZodError, subject: string, schema?: JsonSchema): ToolError {
  const unknown = error.issues.find((issue) => issue.code === 'unrecognized_keys')
  if (unknown && unknown.code === 'unrecognized_keys') return unknownFieldError(unknown.path, unknown.keys, schema)
  const issues = error.issues.slice(0, 5).map((issue) => {
    const field = echoed(issue.path.map(String).join('.'))
    return field ? `${field}: ${echoed(issue.message)}` : echoed(issue.message)
  })
  const first = error.issues[0]
  const field = echoed(first?.path.map(String).join('.') ?? '') || undefined
  // A check that knows better (a path rule, say) passes its own hint along with the issue.
  const specific = first?.code === 'custom' ? (first.params as { hint?: unknown } | undefined)?.hint : undefined
  return new ToolError('validation', `Invalid ${subject}: ${issues.join('; ')}`, {
    hint:
      typeof specific === 'string'
        ? specific
        : field
          ? `Fix the field "${field}" to match the input_schema in GET /v1/tools and send the call again.`
          : 'Send a JSON object that matches the input_schema in GET /v1/tools.',
    details: field ? { field } : {},
  })
}

// A problem names what the client sent, but never echoes megabytes of it: a 5 MB field name, or
// 500,000 unknown ones, is named by its first characters and the first few.
export const echoedNameChars = 100
const echoedNames = 5
export const echoed = (name: string) => (name.length > echoedNameChars ? `${name.slice(0, echoedNameChars)}…` : name)

function unknownFieldError(path: readonly PropertyKey[], keys: readonly string[], schema?: JsonSchema): ToolError {
  const parent = echoed(path.map(String).join('.'))
  const key = echoed(keys[0] ?? '')
  const field = parent ? `${parent}.${key}` : key
  const known = schema ? propertyNamesAt(schema, path) : undefined
  const guess = known ? (closestName(key, known) ?? referenceField(key, known)) : undefined
  const shown = keys
    .slice(0, echoedNames)
    .map((name) => JSON.stringify(parent ? `${parent}.${echoed(name)}` : echoed(name)))
  const names = `${shown.join(', ')}${keys.length > echoedNames ? ` and ${keys.length - echoedNames} more` : ''}`
  const where = parent ? `"${parent}" takes` : 'The fields are'
  const listed = known ? ` ${where}: ${known.join(', ')}.` : ''
  return new ToolError(
    'validation',
    `Unknown field${keys.length > 1 ? 's' : ''} ${names}: this tool does not take ${keys.length > 1 ? 'them' : 'it'}.`,
    {
      hint: guess
        ? `"${key}" is not a field; did you mean ${guess}?${listed}`
        : `"${key}" is not a field of this tool: remove it.${listed}`,
      details: { field, ...(guess ? { did_you_mean: parent ? `${parent}.${guess}` : guess } : {}) },
    },
  )
}
