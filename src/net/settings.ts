import { z } from 'zod'
import { commaList, defineSettings, type SliceOf, variable } from '../core/settings'

export const netSettings = defineSettings({
  title: 'Outbound requests',
  description:
    'Every outbound request (`http_fetch`, `web_fetch`, `screenshot`, search, job callbacks) may reach only public addresses: loopback, private, link-local and metadata addresses are refused, whatever a name resolves to (docs/security.md).',
  variables: {
    TOOLPORT_FETCH_ALLOW_HOSTS: variable({
      schema: commaList(z.string().min(1), 'not a host', 'use host or host:port, e.g. 127.0.0.1:9000'),
      example: 'intranet.example.com,127.0.0.1:9000',
      description:
        'Comma list of hosts (`host` or `host:port`) outbound requests may reach although they are not public: an internal API, a test server.',
    }),
  },
  build: (values) => ({ allowHosts: values.TOOLPORT_FETCH_ALLOW_HOSTS }),
})

export type NetSettings = SliceOf<typeof netSettings>
