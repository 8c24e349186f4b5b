import type { SourceKind } from '../types'
import { aliasKind } from './alias'
import { commandKind } from './command'
import { httpKind } from './http'
import { mcpKind } from './mcp'
import { openApiKind } from './openapi'

const kinds: Record<string, SourceKind<never>> = {
  http: httpKind as SourceKind<never>,
  mcp: mcpKind as SourceKind<never>,
  openapi: openApiKind as SourceKind<never>,
  command: commandKind as SourceKind<never>,
  alias: aliasKind as SourceKind<never>,
}

/** The kind that loads a manifest of this `kind`. */
export function kindFor(kind: string): SourceKind<never> {
  const found = kinds[kind]
  if (!found) throw new Error(`unknown source kind ${kind}`)
  return found
}
