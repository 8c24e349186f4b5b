import { mayCall, type Principal } from '../auth/principal'
import type { Tool } from '../tools/tool'
import { type CatalogEntry, catalogEntry, inputSchemaOf } from './entry'

/**
 * The catalog of one app: its tools by name, and what the catalog, the platform formats, MCP and
 * input handling derive from them. Schemas are derived on first use, once per tool: a cold start that
 * serves one call never pays for the rest.
 */
export interface ToolRegistry {
  /** Every tool, in catalog order. */
  readonly tools: readonly Tool[]
  find(name: string): Tool | undefined
  /** The tools a principal may see and call, in catalog order. */
  visibleTo(principal: Principal): readonly Tool[]
  /** The catalog entry of a tool: name, effect and JSON Schemas. */
  entry(tool: Tool): CatalogEntry
  /** The JSON Schema a caller's input must match (fields with defaults are optional). */
  inputSchema(tool: Tool): Record<string, unknown>
}

export function createRegistry(tools: readonly Tool[]): ToolRegistry {
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  const entries = new Map<Tool, CatalogEntry>()
  const inputSchemas = new Map<Tool, Record<string, unknown>>()
  const registry: ToolRegistry = {
    tools,
    find: (name) => byName.get(name),
    visibleTo: (principal) => (principal.tools ? tools.filter((tool) => mayCall(principal, tool.name)) : tools),
    entry(tool) {
      let entry = entries.get(tool)
      if (!entry) {
        entry = catalogEntry(tool, registry.inputSchema(tool))
        entries.set(tool, entry)
      }
      return entry
    },
    inputSchema(tool) {
      let schema = inputSchemas.get(tool)
      if (!schema) {
        schema = inputSchemaOf(tool)
        inputSchemas.set(tool, schema)
      }
      return schema
    },
  }
  return registry
}
