import type { CatalogEntry } from '../catalog/entry'
import type { JsonSchema } from '../core/json-schema'
import { validationError } from '../core/validation'
import { stripNullOptionals } from '../platforms/nulls'

/**
 * A call's arguments as its tool takes them, the same for every transport: the nulls strict-mode
 * platforms send for unset optional fields dropped (in place), then the tool's own schema, which
 * refuses what it does not know and names the first failing field (400).
 */
export function parseInput(entry: CatalogEntry, raw: unknown, schema: JsonSchema): unknown {
  const parsed = entry.tool.input.safeParse(stripNullOptionals(raw, schema))
  if (!parsed.success) throw validationError(parsed.error, 'input', schema)
  return parsed.data
}
