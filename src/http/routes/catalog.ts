import type { OpenAPIHono } from '@hono/zod-openapi'
import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { catalogFormats, formatCatalog, isCatalogFormat } from '../../platforms/formats'
import type { Tool } from '../../tools/tool'
import type { AppEnv } from '../env'

export interface CatalogEntry {
  name: string
  title: string
  description: string
  effect: Tool['effect']
  input_schema: Record<string, unknown>
  output_schema: Record<string, unknown>
}

/** The JSON Schema a caller's input must match; io 'input': fields with defaults are optional to the caller. */
export function inputSchemaOf(tool: Tool): Record<string, unknown> {
  return z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
}

export function catalogEntry(tool: Tool): CatalogEntry {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    effect: tool.effect,
    input_schema: inputSchemaOf(tool),
    output_schema: z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>,
  }
}

/** A short, stable hash of what a catalog promises, so clients can tell when to refresh tools. */
export async function catalogRevision(entries: readonly CatalogEntry[]): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(entries)))
  return Array.from(new Uint8Array(digest).subarray(0, 8), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

export function registerCatalogRoute(app: OpenAPIHono<AppEnv>, tools: readonly Tool[]): void {
  // Schemas are derived once per app, on the first catalog request rather than at start (a Lambda cold
  // start serving a tool call never needs them); each key then sees the part of the catalog it may call.
  let entries: CatalogEntry[] | undefined
  app.get('/v1/tools', async (context) => {
    const format = context.req.query('format') ?? 'toolport'
    if (!isCatalogFormat(format)) {
      throw new ToolError('validation', `Unknown catalog format ${JSON.stringify(format)}.`, {
        hint: `Use format=${catalogFormats.filter((name) => name !== 'toolport').join(', format=')}, or omit it for the toolport catalog.`,
        details: { field: 'format' },
      })
    }
    const allowed = context.get('principal').tools
    entries ??= tools.map(catalogEntry)
    const visible = allowed ? entries.filter((entry) => allowed.has(entry.name)) : entries
    // The revision hashes the toolport entries, so it is the same whichever format is asked for.
    return context.json({ revision: await catalogRevision(visible), format, tools: formatCatalog(format, visible) })
  })
}
