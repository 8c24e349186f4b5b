import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { scopesSupported } from '../../auth/oauth/scopes'
import type { AppEnv } from '../env'

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728), as MCP clients discover it after a 401: the root
 * form describes the service (resource = TOOLPORT_PUBLIC_URL), the path form the MCP endpoint
 * (resource = …/mcp), since a resource's metadata must name the identifier its URL was built from.
 * Public, like any discovery document; no secrets in it.
 */
export function registerResourceMetadataRoutes(
  app: OpenAPIHono<AppEnv>,
  options: { publicUrl: string; issuer: string },
) {
  const document = (resource: string) => ({
    resource,
    authorization_servers: [options.issuer],
    scopes_supported: scopesSupported,
    bearer_methods_supported: ['header'],
    resource_name: 'toolport',
    resource_documentation: `${options.publicUrl}/docs`,
  })
  const serve = (resource: string) => (context: Context<AppEnv>) => {
    context.header('Access-Control-Allow-Origin', '*')
    context.header('Cache-Control', 'public, max-age=300')
    return context.json(document(resource))
  }
  app.get('/.well-known/oauth-protected-resource', serve(options.publicUrl))
  app.get('/.well-known/oauth-protected-resource/mcp', serve(`${options.publicUrl}/mcp`))
}
