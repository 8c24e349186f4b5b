import { z } from 'zod'
import { ConfigError, defineSettings, positiveInteger, type SliceOf, variable } from '../../core/settings'

const algorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const

export const oauthSettings = defineSettings({
  title: 'OAuth (access tokens)',
  description:
    "Beside API keys, toolport accepts OAuth 2.1 access tokens as a protected resource (RFC 9728): hosted MCP clients (Claude and ChatGPT connectors) discover the issuer from `/.well-known/oauth-protected-resource` and sign in there. Tokens are JWTs verified against the issuer's published keys, or opaque tokens the issuer introspects (docs/auth.md).",
  variables: {
    TOOLPORT_OAUTH_ISSUER: variable({
      schema: z.union([z.literal('builtin'), z.url({ protocol: /^https?$/ })]).optional(),
      description:
        "The issuer whose access tokens are accepted (its `iss`); its metadata is read from `/.well-known/oauth-authorization-server` or `/.well-known/openid-configuration` under it. `builtin`: the built-in authorization server at `TOOLPORT_PUBLIC_URL/oauth` (Node), where people sign in with their toolport key. Needs `TOOLPORT_PUBLIC_URL`, which is this resource's identifier (tokens must carry it in `aud`). Unset: keys only.",
    }),
    TOOLPORT_OAUTH_ACCESS_TOKEN_SECONDS: variable({
      schema: positiveInteger.min(10).max(86_400),
      default: '3600',
      description:
        'Built-in server: life of an access token; clients refresh it after that. Short lives (the least is 10 s) make a revoked grant or a removed key take effect sooner, at the cost of more refreshes.',
    }),
    TOOLPORT_OAUTH_REFRESH_TOKEN_SECONDS: variable({
      schema: positiveInteger.min(300).max(31_536_000),
      default: '2592000',
      description:
        'Built-in server: life of a refresh token (and of the grant behind it). Each use returns a new one; reusing an old one revokes the grant.',
    }),
    TOOLPORT_OAUTH_TENANT_CLAIM: variable({
      schema: z.string().regex(/^[A-Za-z0-9_.:/-]{1,128}$/),
      default: 'toolport_tenant',
      description: 'The token claim naming the tenant the token acts for.',
    }),
    TOOLPORT_OAUTH_TENANT: variable({
      schema: z
        .string()
        .regex(/^[A-Za-z0-9._-]{1,64}$/)
        .optional(),
      description:
        'The tenant of tokens without the tenant claim (an issuer that serves one tenant). Unset: such tokens are refused.',
    }),
    TOOLPORT_OAUTH_WORKSPACE_CLAIM: variable({
      schema: z
        .string()
        .regex(/^[A-Za-z0-9_.:/-]{1,128}$/)
        .optional(),
      description: 'A token claim naming the workspace used when a call names none (instead of `default`).',
    }),
    TOOLPORT_OAUTH_ALGORITHMS: variable({
      schema: z
        .string()
        .transform((text) => text.split(',').map((entry) => entry.trim()))
        .pipe(z.array(z.enum(algorithms)).min(1)),
      default: 'RS256,PS256,ES256,EdDSA',
      description:
        'Signature algorithms a token may use: asymmetric only (`none` and HMAC are never accepted, so a public key can never serve as a shared secret).',
    }),
    TOOLPORT_OAUTH_CLOCK_SKEW_SECONDS: variable({
      schema: positiveInteger.max(300),
      default: '30',
      description: "Tolerance for `exp`, `nbf` and `iat` against this machine's clock.",
    }),
    TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID: variable({
      schema: z.string().min(1).max(256).optional(),
      description:
        "External issuer: toolport's client at the issuer for token introspection (RFC 7662). With it (and its secret), a bearer that is neither a key nor a JWT is sent to the issuer's `introspection_endpoint` (from its metadata) with HTTP Basic client authentication; active answers are cached for at most 60 s. Unset: only JWT access tokens are accepted.",
    }),
    TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET: variable({
      schema: z.string().min(1).max(1024).optional(),
      secret: true,
      description: 'The secret of `TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID` (`client_secret_basic`); both or neither.',
    }),
  },
  build: (values) => ({
    issuer: values.TOOLPORT_OAUTH_ISSUER,
    accessTokenSeconds: values.TOOLPORT_OAUTH_ACCESS_TOKEN_SECONDS,
    refreshTokenSeconds: values.TOOLPORT_OAUTH_REFRESH_TOKEN_SECONDS,
    tenantClaim: values.TOOLPORT_OAUTH_TENANT_CLAIM,
    tenant: values.TOOLPORT_OAUTH_TENANT,
    workspaceClaim: values.TOOLPORT_OAUTH_WORKSPACE_CLAIM,
    algorithms: values.TOOLPORT_OAUTH_ALGORITHMS,
    clockSkewSeconds: values.TOOLPORT_OAUTH_CLOCK_SKEW_SECONDS,
    introspection: introspectionClient(
      values.TOOLPORT_OAUTH_ISSUER,
      values.TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID,
      values.TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET,
    ),
  }),
})

/** The introspection client: both parts or neither, and only for an external issuer. */
function introspectionClient(
  issuer: string | undefined,
  clientId: string | undefined,
  clientSecret: string | undefined,
): { clientId: string; clientSecret: string } | undefined {
  if (clientId === undefined && clientSecret === undefined) return undefined
  if (clientId === undefined || clientSecret === undefined) {
    throw new ConfigError(
      `TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID and TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET go together: ${clientId === undefined ? 'the client id' : 'the secret'} is missing.`,
    )
  }
  if (issuer === undefined || issuer === 'builtin') {
    throw new ConfigError(
      `TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID needs an external TOOLPORT_OAUTH_ISSUER (${issuer === undefined ? 'none is set' : 'the built-in server issues JWTs, checked without introspection'}).`,
    )
  }
  return { clientId, clientSecret }
}

export type OAuthSettings = SliceOf<typeof oauthSettings>
