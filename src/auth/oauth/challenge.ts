import { ToolError } from '../../core/errors'
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

/** A 401 invalid_token with a reason safe to show (never the token). */
export function invalidToken(description: string): ToolError {
  return new ToolError('unauthenticated', `The access token is not valid: ${description}.`, {
    hint: 'Sign in again to get a new token for this service (its resource metadata names the issuer).',
    details: { error: 'invalid_token' },
  })
}

/** A 503 while the issuer (its metadata, keys or introspection) cannot be reached: the caller may retry. */
export function issuerUnreachable(cause: unknown): ToolError {
  return new ToolError('unavailable', 'The token issuer could not be reached to check the access token.', {
    hint: 'Try again in a moment; the operator can check TOOLPORT_OAUTH_ISSUER.',
    headers: { 'Retry-After': '5' },
    cause,
  })
}
