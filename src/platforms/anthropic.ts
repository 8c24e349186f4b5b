import type { ToolListing } from '../catalog/entry'
import type { JsonSchema } from '../core/json-schema'

export interface AnthropicTool {
  name: string
  description: string
  input_schema: JsonSchema
}

/** Claude takes JSON Schema as is; only the dialect marker goes, it is implied. */
export function toAnthropicTool(entry: ToolListing): AnthropicTool {
  const { $schema: _, ...inputSchema } = entry.input_schema
  return { name: entry.name, description: entry.description, input_schema: inputSchema }
}
