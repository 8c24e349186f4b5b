import { z } from 'zod'
import { commaList, defineSettings, httpUrl, type SliceOf, variable } from '../core/settings'
import { parseRateLimit } from './middleware/rate-limit'

// A host name or address, optionally with a port: what a Host header carries.
const allowedHost = z
  .string()
  .transform((value) => value.toLowerCase())
  .refine((value) => /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.test(value))

const origin = z
  .string()
  .transform((value) => value.replace(/\/+$/, ''))
  .refine((value) => value === '*' || /^https?:\/\/[^/\s]+$/.test(value))

export const httpSettings = defineSettings({
  title: 'Server',
  variables: {
    PORT: variable({
      schema: z.coerce.number().int().min(0).max(65535),
      default: '8787',
      description: 'TCP port of the Node server.',
    }),
    HOST: variable({
      schema: z.string().min(1),
      default: '127.0.0.1',
      description:
        'Listen address of the Node server. Anything but loopback (`127.0.0.1`, `::1`, `localhost`) requires API keys.',
    }),
    TOOLPORT_PUBLIC_URL: variable({
      schema: httpUrl.optional(),
      description:
        'The URL clients use: `servers[0].url` of the OpenAPI document, and the origin of download links, job and approval URLs. Unset: `http://{HOST}:{PORT}` in the document, and links point at the origin a call came in on when its host is trusted (TOOLPORT_ALLOWED_HOSTS).',
    }),
    TOOLPORT_ALLOWED_HOSTS: variable({
      schema: commaList(allowedHost, 'not a host', 'use e.g. tools.example.com or tools.example.com:8443'),
      example: 'tools.example.com',
      description:
        'Comma list of host names (`host` for any port, or `host:port`) whose requests get links on their own origin when TOOLPORT_PUBLIC_URL is unset. Unset: only the listen address and loopback; a request with any other `Host` gets links to `http://{HOST}:{PORT}`, never to the host it claims.',
    }),
    TOOLPORT_CORS_ORIGINS: variable({
      schema: commaList(origin, 'not an origin', 'use e.g. https://app.example.com'),
      description: 'Comma list of browser origins allowed to call (`*` for any); unset: no CORS headers at all.',
    }),
    TOOLPORT_RATE_LIMIT: variable({
      schema: z
        .string()
        .refine((value) => parseRateLimit(value) !== undefined, 'use COUNT/UNIT with UNIT s, min or hour, e.g. 60/min')
        .transform((value) => parseRateLimit(value))
        .meta({ values: 'COUNT/UNIT' })
        .optional(),
      example: '60/min',
      description:
        'Calls per key and window (`s`, `min`, `hour`), per instance; past it, 429 with `Retry-After`. Unset: unlimited.',
    }),
  },
  build(values) {
    const host = values.HOST
    const hostForUrl = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
    return {
      port: values.PORT,
      host,
      /** Where this service is reached: TOOLPORT_PUBLIC_URL, or the listen address. */
      publicUrl: values.TOOLPORT_PUBLIC_URL ?? `http://${hostForUrl}:${values.PORT}`,
      /** TOOLPORT_PUBLIC_URL when it was set; otherwise links point at the request's origin. */
      configuredPublicUrl: values.TOOLPORT_PUBLIC_URL,
      /** TOOLPORT_ALLOWED_HOSTS: hosts whose requests get links on their own origin. */
      allowedHosts: values.TOOLPORT_ALLOWED_HOSTS,
      corsOrigins: values.TOOLPORT_CORS_ORIGINS,
      rateLimit: values.TOOLPORT_RATE_LIMIT,
    }
  },
})

export type HttpSettings = SliceOf<typeof httpSettings>
