import type { Effect } from '../core/effects'
import { fingerprint } from '../core/hash'
import { idOf, type Tool } from '../tools/tool'
import { inputSchemaOf, outputSchemaOf } from '../tools/tool-schemas'

/** One tool as the catalog shows it: what every platform format and the OpenAPI document derive from. */
export interface CatalogEntry {
  /** Stable identity: `builtin:{name}`, or `{source}:{tool}` for a tool a source declares. */
  id: string
  name: string
  title: string
  description: string
  effect: Effect
  input_schema: Record<string, unknown>
  output_schema: Record<string, unknown>
  /** Whether a call may overwrite or delete, and whether repeating it changes nothing more (MCP's hints). */
  hints: { destructive: boolean; idempotent: boolean }
  /** Fingerprint of this entry's name, description, effect and schemas: changes when any of them does. */
  revision: string
}

/** A tool's hints, from its effect unless the tool says more (see Tool.hints). */
export function hintsOf(tool: Tool): CatalogEntry['hints'] {
  return {
    destructive: tool.hints?.destructive ?? (tool.effect === 'write' || tool.effect === 'destructive'),
    idempotent: tool.hints?.idempotent ?? tool.effect === 'read',
  }
}

export function catalogEntry(
  tool: Tool,
  inputSchema = inputSchemaOf(tool),
  outputSchema = outputSchemaOf(tool),
): CatalogEntry {
  const promised = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    effect: tool.effect,
    input_schema: inputSchema,
    output_schema: outputSchema,
    hints: hintsOf(tool),
  }
  return { id: idOf(tool), ...promised, revision: fingerprint(JSON.stringify(promised)) }
}

/**
 * A short, stable tag of what a catalog promises, so clients can tell when to refresh tools: it changes
 * when a tool comes or goes, or when any tool's own revision does.
 */
export function catalogRevision(entries: readonly CatalogEntry[]): string {
  return fingerprint(entries.map((entry) => `${entry.id}@${entry.revision}`).join('\n'))
}
