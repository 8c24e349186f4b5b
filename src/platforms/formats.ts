import type { ToolListing } from '../catalog/entry'
import { toAnthropicTool } from './anthropic'
import { toGeminiDeclaration } from './gemini'
import { toMcpTool } from './mcp'
import { toOpenAiTool } from './openai'

export const catalogFormats = ['toolport', 'openai', 'anthropic', 'gemini', 'mcp'] as const
export type CatalogFormat = (typeof catalogFormats)[number]

export function isCatalogFormat(value: string): value is CatalogFormat {
  return (catalogFormats as readonly string[]).includes(value)
}

/**
 * The catalog as each platform's request expects it, so a client can paste `tools` straight into
 * its API call: OpenAI's `tools`, Claude's `tools`, Gemini's `tools[0].functionDeclarations`, MCP's
 * `tools/list` result.
 */
export function formatCatalog(format: CatalogFormat, entries: readonly ToolListing[]): unknown[] {
  switch (format) {
    case 'toolport':
      return [...entries]
    case 'openai':
      return entries.map(toOpenAiTool)
    case 'anthropic':
      return entries.map(toAnthropicTool)
    case 'gemini':
      return entries.map(toGeminiDeclaration)
    case 'mcp':
      return entries.map(toMcpTool)
  }
}
