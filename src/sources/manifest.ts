import { z } from 'zod'
import { closestName } from '../core/closest-name'
import { ToolError } from '../core/errors'
import { fingerprint } from '../core/hash'
import { AliasManifest } from './kinds/alias'
import { CommandManifest } from './kinds/command'
import { HttpManifest } from './kinds/http'
import { McpManifest } from './kinds/mcp-manifest'
import { OpenApiManifest } from './kinds/openapi'
import { WorkerManifest } from './kinds/worker-manifest'
import { fromReferenceShape, type ManifestDefaults } from './reference-shape'
import type { SourceOwner } from './types'
import { parseYaml } from './yaml'

/** Every kind of source a manifest may declare, told apart by `kind`. */
export const SourceManifest = z.discriminatedUnion('kind', [
  HttpManifest,
  McpManifest,
  OpenApiManifest,
  CommandManifest,
  AliasManifest,
  WorkerManifest,
])
export type SourceManifest = z.output<typeof SourceManifest>
export const sourceKinds = ['http', 'mcp', 'openapi', 'command', 'alias', 'worker'] as const

/**
 * What tenants may register beyond http, mcp (url), openapi and alias: `command`, `mcp-stdio` and
 * `worker` run programs, in the sandbox, only where the operator lists them (TOOLPORT_TENANT_SOURCE_KINDS).
 */
export const tenantSourceKinds = ['http', 'mcp', 'openapi', 'alias', 'command', 'mcp-stdio', 'worker'] as const
export type TenantSourceKind = (typeof tenantSourceKinds)[number]

/** A manifest that passed every check, as it is stored and loaded. */
export interface SourceDefinition {
  manifest: SourceManifest
  /** `"enabled": false` keeps the source registered but serves none of its tools (they are unavailable). */
  enabled: boolean
  /** Fingerprint of the manifest as given: a source is reloaded only when it changes. */
  revision: string
}

// A manifest is data a person writes: a few hundred KB covers a thousand tools with schemas.
export const maxManifestBytes = 2 * 1024 * 1024

/** Parses a manifest's text: JSON, or YAML when `format` says so (a .yaml file; the parser loads on first use). */
export async function parseManifestText(text: string, format: 'json' | 'yaml', where: string): Promise<unknown> {
  if (text.length > maxManifestBytes) {
    throw manifestError(`${where} is ${text.length} bytes; a manifest may have at most ${maxManifestBytes}.`, undefined)
  }
  try {
    return format === 'yaml' ? await parseYaml(text) : JSON.parse(text)
  } catch (error) {
    throw manifestError(
      `${where} is not valid ${format === 'yaml' ? 'YAML' : 'JSON'}: ${(error as Error).message.slice(0, 200)}`,
      undefined,
    )
  }
}

/**
 * Checks a manifest as a whole: its shape (unknown fields are refused with the closest known name),
 * its schemas, and what its owner may declare. Throws ToolError validation (400) or, for what the
 * owner may not do, permission_denied (403), naming the field.
 */
export function parseManifest(
  json: unknown,
  owner: SourceOwner,
  options: { tenantKinds: readonly TenantSourceKind[]; defaults?: ManifestDefaults },
): SourceDefinition {
  const { candidate: translated, authorField } = fromReferenceShape(json, options.defaults)
  const { enabled, candidate } = withoutEnabled(translated)
  const parsed = SourceManifest.safeParse(candidate)
  if (!parsed.success) throw renamed(issueError(parsed.error, candidate), authorField)
  const manifest = parsed.data
  if (owner.kind === 'tenant') checkTenantManifest(manifest, options.tenantKinds)
  // The revision is the manifest's as stored, enabled or not: flipping it is a change like any other.
  return { manifest, enabled, revision: fingerprint(JSON.stringify(translated)) }
}

/** `enabled`, which every kind of manifest may carry (default true), apart from the kind's own fields. */
function withoutEnabled(candidate: unknown): { enabled: boolean; candidate: unknown } {
  if (typeof candidate !== 'object' || candidate === null || !('enabled' in candidate)) {
    return { enabled: true, candidate }
  }
  const { enabled, ...rest } = candidate as Record<string, unknown>
  if (typeof enabled !== 'boolean') throw manifestError('enabled must be true or false.', 'enabled')
  return { enabled, candidate: rest }
}

/** A manifest error naming the field as the author wrote it (a reference plugin's aiTools, rpc.methods). */
function renamed(error: ToolError, authorField: (field: string) => string): ToolError {
  const field = error.details?.field
  if (typeof field !== 'string') return error
  const theirs = authorField(field)
  if (theirs === field) return error
  return new ToolError('validation', error.message.split(field).join(theirs), {
    hint: (error.hint ?? '').split(field).join(theirs),
    details: { ...error.details, field: theirs },
  })
}

function checkTenantManifest(manifest: SourceManifest, allowed: readonly TenantSourceKind[]): void {
  const kind: TenantSourceKind = manifest.kind === 'mcp' && manifest.command ? 'mcp-stdio' : manifest.kind
  if (!allowed.includes(kind)) {
    throw new ToolError('permission_denied', `Tenants may not register ${kind} sources on this service.`, {
      hint: `Register one of: ${allowed.join(', ')}; the operator opens more with TOOLPORT_TENANT_SOURCE_KINDS.`,
      details: { field: kind === 'mcp-stdio' ? 'command' : 'kind' },
    })
  }
  if ((manifest.kind === 'mcp' || manifest.kind === 'command' || manifest.kind === 'worker') && manifest.mounts) {
    throw new ToolError('permission_denied', 'Only operator sources may mount host folders.', {
      hint: 'Remove mounts; a tenant program runs with the sandbox image and its workspace only.',
      details: { field: 'mounts' },
    })
  }
}

/** The first problem zod found, as one 400 naming the field, with a did-you-mean for unknown fields. */
function issueError(error: z.ZodError, candidate: unknown): ToolError {
  // An unknown field is most often the cause of the other issues (a misspelled required field): name it first.
  const issue = error.issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? error.issues[0]
  if (!issue) return manifestError('The manifest is not valid.', undefined)
  const path = issue.path.map(String)
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? ''
    const field = [...path, key].join('.')
    const known = knownKeysAt(candidate, path)
    const guess = closestName(key, known)
    return manifestError(
      `The manifest has a field it does not know: ${field}.`,
      field,
      guess
        ? `Did you mean ${[...path, guess].join('.')}? Remove or rename ${field}.`
        : `Remove ${field}; docs/sources.md lists the fields of each kind.`,
    )
  }
  if (issue.code === 'invalid_union' && path.length === 0) {
    return manifestError(
      `kind must be one of ${sourceKinds.join(', ')}.`,
      'kind',
      'Set kind to http, mcp, openapi, command, alias or worker (docs/sources.md), or write a plugin manifest (aiTools and rpc.methods).',
    )
  }
  const field = path.join('.') || undefined
  return manifestError(`${field ? `${field}: ` : ''}${issue.message}.`, field)
}

/** The field names a strict object at `path` accepts, found by asking the kind's schema. */
function knownKeysAt(candidate: unknown, path: string[]): string[] {
  const kind = (candidate as { kind?: unknown } | null)?.kind
  const schema = [HttpManifest, McpManifest, OpenApiManifest, CommandManifest, AliasManifest, WorkerManifest].find(
    (option) => (option.shape as { kind: z.ZodLiteral<string> }).kind.value === kind,
  )
  let current: z.ZodType | undefined = schema
  for (const part of path) current = childOf(current, part)
  const shape = objectShapeOf(current)
  return shape ? Object.keys(shape) : []
}

function childOf(schema: z.ZodType | undefined, part: string): z.ZodType | undefined {
  const unwrapped = unwrap(schema)
  if (unwrapped instanceof z.ZodArray) return unwrapped.element as z.ZodType
  const shape = objectShapeOf(unwrapped)
  return shape?.[part]
}

function objectShapeOf(schema: z.ZodType | undefined): Record<string, z.ZodType> | undefined {
  const unwrapped = unwrap(schema)
  return unwrapped instanceof z.ZodObject ? (unwrapped.shape as Record<string, z.ZodType>) : undefined
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema
  for (let hops = 0; hops < 8 && current; hops++) {
    const inner = (current as { unwrap?: () => z.ZodType }).unwrap
    if (current instanceof z.ZodPipe) current = current.in as z.ZodType
    else if (typeof inner === 'function' && !(current instanceof z.ZodArray)) current = inner.call(current)
    else break
  }
  return current
}

export function manifestError(message: string, field: string | undefined, hint?: string): ToolError {
  return new ToolError('validation', message, {
    hint: hint ?? `Fix ${field ?? 'the manifest'} and send it again; docs/sources.md describes every kind of source.`,
    details: field ? { field } : {},
  })
}
