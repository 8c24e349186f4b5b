import { scopesSupported } from './scopes'

/** Where this resource's metadata lives (RFC 9728 section 3.1): the root form, or the path form for /mcp. */
export function resourceMetadataUrl(publicUrl: string, path: '' | '/mcp'): string {
  return `${publicUrl}/.well-known/oauth-protected-resource${path}`
}

export type BearerError = 'invalid_token' | 'insufficient_scope'

/**
 * The WWW-Authenticate value of a 401 or 403 (RFC 6750 section 3, RFC 9728 section 5.1): where the
 * resource metadata is, the scope the call needs, and what was wrong with the token, if one came.
 */
export function bearerChallenge(options: {
  resourceMetadata: string
  error?: BearerError | undefined
  description?: string | undefined
  scope?: string | undefined
}): string {
  const quoted = (value: string) => `"${value.replace(/["\\]/g, '')}"`
  const parts = [`realm="toolport"`, `resource_metadata=${quoted(options.resourceMetadata)}`]
  if (options.error) parts.push(`error=${quoted(options.error)}`)
  if (options.description) parts.push(`error_description=${quoted(options.description)}`)
  parts.push(`scope=${quoted(options.scope ?? scopesSupported.join(' '))}`)
  return `Bearer ${parts.join(', ')}`
}
