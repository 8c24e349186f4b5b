import { z } from 'zod'
import type { Effect } from '../core/effects'
import type { Tool } from '../tools/tool'

/** One tool as the catalog shows it: what every platform format and the OpenAPI document derive from. */
export interface CatalogEntry {
  name: string
  title: string
  description: string
  effect: Effect
  input_schema: Record<string, unknown>
  output_schema: Record<string, unknown>
}

/** The JSON Schema a caller's input must match; io 'input': fields with defaults are optional to the caller. */
export function inputSchemaOf(tool: Tool): Record<string, unknown> {
  return z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
}

export function catalogEntry(tool: Tool, inputSchema = inputSchemaOf(tool)): CatalogEntry {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    effect: tool.effect,
    input_schema: inputSchema,
    output_schema: z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>,
  }
}

/** A short, stable hash of what a catalog promises, so clients can tell when to refresh tools. */
export async function catalogRevision(entries: readonly CatalogEntry[]): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(entries)))
  return Array.from(new Uint8Array(digest).subarray(0, 8), (byte) => byte.toString(16).padStart(2, '0')).join('')
}
