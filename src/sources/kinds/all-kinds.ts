import type { SourceKind } from '../types'

/**
 * The kind that loads a manifest of this `kind`, imported when a source of it first loads: a
 * service with no MCP source never loads the MCP client, one with no OpenAPI source no YAML parser.
 */
export async function kindFor(kind: string): Promise<SourceKind<never>> {
  switch (kind) {
    case 'http':
      return (await import('./http')).httpKind as SourceKind<never>
    case 'mcp':
      return (await import('./mcp')).mcpKind as SourceKind<never>
    case 'openapi':
      return (await import('./openapi')).openApiKind as SourceKind<never>
    case 'command':
      return (await import('./command')).commandKind as SourceKind<never>
    case 'worker':
      return (await import('./worker')).workerKind as SourceKind<never>
    case 'alias':
      return (await import('./alias')).aliasKind as SourceKind<never>
    default:
      throw new Error(`unknown source kind ${kind}`)
  }
}
