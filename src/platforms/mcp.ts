import type { Effect } from '../core/effects'
import type { JsonSchema } from '../core/json-schema'
import type { CatalogEntry } from '../registry/entry'

export interface McpToolAnnotations {
  title: string
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

export interface McpTool {
  name: string
  title: string
  description: string
  inputSchema: JsonSchema & { type: 'object' }
  outputSchema: JsonSchema & { type: 'object' }
  annotations: McpToolAnnotations
}

/**
 * MCP's hints say the same as toolport's effects: only `read` leaves the world as it was (and so is
 * safe to repeat), only `destructive` may lose data, only `external` reaches outside the service.
 */
export function annotationsFor(effect: Effect, title: string): McpToolAnnotations {
  return {
    title,
    readOnlyHint: effect === 'read',
    destructiveHint: effect === 'destructive',
    idempotentHint: effect === 'read',
    openWorldHint: effect === 'external',
  }
}

export function toMcpTool(entry: CatalogEntry): McpTool {
  return {
    name: entry.name,
    title: entry.title,
    description: entry.description,
    inputSchema: objectSchema(entry.input_schema),
    outputSchema: objectSchema(entry.output_schema),
    annotations: annotationsFor(entry.effect, entry.title),
  }
}

// MCP's default dialect is 2020-12 already, and some clients' validators refuse a $schema they lack.
function objectSchema(schema: JsonSchema): JsonSchema & { type: 'object' } {
  const { $schema: _, ...rest } = schema
  return { ...rest, type: 'object' }
}
