import { z } from 'zod'
import { parseRateLimit, type RateLimit } from '../../core/rate-limit'
import { booleanText, commaList, defineSettings, type SliceOf, variable } from '../../core/settings'

/** An operator-registered client (a GPT Action): a static id and secret, its exact callback URLs. */
const staticClient = z.strictObject({
  client_id: z.string().regex(/^[A-Za-z0-9._~-]{1,128}$/, 'use letters, digits and . _ ~ -'),
  client_secret: z.string().min(32, 'use at least 32 characters (e.g. openssl rand -hex 32)'),
  redirect_uris: z.array(z.url({ protocol: /^https?$/ })).min(1),
  client_name: z.string().max(128).optional(),
  /** ChatGPT's "Token Exchange Method": Default (POST body) or Basic authorization header. */
  token_endpoint_auth_method: z.enum(['client_secret_post', 'client_secret_basic']).default('client_secret_post'),
})

export type StaticClient = z.output<typeof staticClient>

const clientList = z
  .string()
  .transform((text, context) => {
    try {
      return JSON.parse(text) as unknown
    } catch {
      context.addIssue({ code: 'custom', message: 'not JSON: use a JSON array of clients' })
      return z.NEVER
    }
  })
  .pipe(z.array(staticClient))
  .meta({ values: 'JSON array' })

export const oauthServerSettings = defineSettings({
  title: 'OAuth (built-in authorization server)',
  description:
    "With `TOOLPORT_OAUTH_ISSUER=builtin` toolport is its own authorization server at `TOOLPORT_PUBLIC_URL/oauth`: people sign in with their toolport key or through the operator's OpenID Connect provider, and consent to what the client asks for (docs/auth.md).",
  variables: {
    TOOLPORT_OAUTH_RATE_LIMIT: variable({
      schema: z
        .string()
        .refine((value) => parseRateLimit(value) !== undefined, 'use COUNT/UNIT with UNIT s, min or hour, e.g. 60/min')
        .transform((value) => parseRateLimit(value) as RateLimit)
        .meta({ values: 'COUNT/UNIT' }),
      default: '60/min',
      description:
        'Requests to the token and registration endpoints per client address and window; past it, 429 with `Retry-After`. Fleet-wide with `TOOLPORT_REDIS_URL`, else per instance.',
    }),
    TOOLPORT_OAUTH_CLIENTS: variable({
      schema: clientList.optional(),
      secret: true,
      example:
        '[{"client_id":"my-gpt","client_secret":"…","redirect_uris":["https://chatgpt.com/aip/g-…/oauth/callback"]}]',
      description:
        'Clients registered by the operator, for platforms that take a static client id and secret (a GPT Action): `client_id`, `client_secret` (32+ characters), `redirect_uris` (matched exactly), optional `client_name` and `token_endpoint_auth_method` (`client_secret_post`, the default, or `client_secret_basic`). They may skip PKCE, which only public clients must use.',
    }),
    TOOLPORT_OAUTH_CLIENT_METADATA_DOCUMENTS: variable({
      schema: booleanText,
      default: 'true',
      description:
        'Accept Client ID Metadata Documents (MCP 2025-11-25): a client whose `client_id` is an https URL is described by the JSON document there, fetched under the outbound address rules (public addresses only, unless in `TOOLPORT_FETCH_ALLOW_HOSTS`).',
    }),
    TOOLPORT_OAUTH_UPSTREAM_ISSUER: variable({
      schema: z.url({ protocol: /^https?$/ }).optional(),
      description:
        'An OpenID Connect provider people may sign in through instead of typing a key (Google, Entra, Okta, Keycloak…): its issuer URL, read by discovery. Register toolport there with the redirect URI `TOOLPORT_PUBLIC_URL/oauth/upstream/callback`.',
    }),
    TOOLPORT_OAUTH_UPSTREAM_CLIENT_ID: variable({
      schema: z.string().min(1).optional(),
      description: 'The client id toolport has at the upstream provider.',
    }),
    TOOLPORT_OAUTH_UPSTREAM_CLIENT_SECRET: variable({
      schema: z.string().min(1).optional(),
      secret: true,
      description: 'The client secret toolport has at the upstream provider (sent with HTTP Basic).',
    }),
    TOOLPORT_OAUTH_UPSTREAM_NAME: variable({
      schema: z.string().min(1).max(64),
      default: 'single sign-on',
      description: 'How the sign-in page names the upstream provider ("Sign in with …").',
    }),
    TOOLPORT_OAUTH_UPSTREAM_TENANT: variable({
      schema: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/)
        .optional(),
      description:
        'The tenant of everyone who signs in upstream, unless `TOOLPORT_OAUTH_UPSTREAM_TENANT_CLAIM` names one in their ID token.',
    }),
    TOOLPORT_OAUTH_UPSTREAM_TENANT_CLAIM: variable({
      schema: z
        .string()
        .regex(/^[A-Za-z0-9_.:/-]{1,128}$/)
        .optional(),
      description: 'An ID token claim naming the tenant of the person signing in (wins over the fixed tenant).',
    }),
    TOOLPORT_OAUTH_UPSTREAM_ALLOW: variable({
      schema: commaList(
        z.string().regex(/^([^@\s,]+@)?[^@\s,]+\.[^@\s,]+$|^@[^@\s,]+\.[^@\s,]+$/),
        'not an address or @domain',
        'use e.g. ana@example.com or @example.com',
      ),
      example: '@example.com,ana@partner.org',
      description:
        'Who may sign in upstream: e-mail addresses and `@domain`s, matched against a verified `email` claim. Unset: everyone the provider signs in (fit for a company provider, not for Google).',
    }),
    TOOLPORT_OAUTH_UPSTREAM_SCOPES: variable({
      schema: commaList(
        z.string().regex(/^(tools:(read|write|external|destructive)|approver|admin)$/),
        'not a scope',
        'use tools:read, tools:write, tools:external, tools:destructive, approver or admin',
      ),
      default: 'tools:read,tools:write',
      description:
        'The most a person signed in upstream may give a client (they have no key to decide it): effect scopes, `approver`, `admin`.',
    }),
  },
  build: (values) => ({
    rateLimit: values.TOOLPORT_OAUTH_RATE_LIMIT,
    clients: values.TOOLPORT_OAUTH_CLIENTS ?? [],
    clientMetadataDocuments: values.TOOLPORT_OAUTH_CLIENT_METADATA_DOCUMENTS,
    upstream: values.TOOLPORT_OAUTH_UPSTREAM_ISSUER
      ? {
          issuer: values.TOOLPORT_OAUTH_UPSTREAM_ISSUER,
          clientId: values.TOOLPORT_OAUTH_UPSTREAM_CLIENT_ID,
          clientSecret: values.TOOLPORT_OAUTH_UPSTREAM_CLIENT_SECRET,
          name: values.TOOLPORT_OAUTH_UPSTREAM_NAME,
          tenant: values.TOOLPORT_OAUTH_UPSTREAM_TENANT,
          tenantClaim: values.TOOLPORT_OAUTH_UPSTREAM_TENANT_CLAIM,
          allow: values.TOOLPORT_OAUTH_UPSTREAM_ALLOW ?? [],
          scopes: values.TOOLPORT_OAUTH_UPSTREAM_SCOPES,
        }
      : undefined,
  }),
})

export type OAuthServerSettings = SliceOf<typeof oauthServerSettings>
export type UpstreamSettings = NonNullable<OAuthServerSettings['upstream']>
