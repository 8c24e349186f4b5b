import type { ToolListing } from '../catalog/entry'
import type { Effect } from '../core/effects'
import type { JsonSchema } from '../core/json-schema'

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
 * MCP's hints from toolport's effect and the tool's own hints: only `read` leaves the world as it was;
 * a call that may overwrite or delete is destructive (every write tool that can replace a file, not only
 * the `destructive` ones); `external` tools and reads of the public web reach outside the service.
 */
export function annotationsFor(
  effect: Effect,
  title: string,
  hints: { destructive: boolean; idempotent: boolean; openWorld: boolean },
): McpToolAnnotations {
  return {
    title,
    readOnlyHint: effect === 'read',
    destructiveHint: effect !== 'read' && hints.destructive,
    idempotentHint: hints.idempotent,
    openWorldHint: hints.openWorld,
  }
}

export function toMcpTool(entry: ToolListing): McpTool {
  return {
    name: entry.name,
    title: entry.title,
    description: entry.description,
    inputSchema: objectSchema(entry.input_schema),
    outputSchema: objectSchema(entry.output_schema),
    annotations: annotationsFor(entry.effect, entry.title, entry.hints),
  }
}

// MCP's default dialect is 2020-12 already, and some clients' validators refuse a $schema they lack.
function objectSchema(schema: JsonSchema): JsonSchema & { type: 'object' } {
  const { $schema: _, ...rest } = schema
  return { ...rest, type: 'object' }
}
