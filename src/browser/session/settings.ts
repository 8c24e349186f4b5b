import { z } from 'zod'
import { booleanText, defineSettings, positiveInteger, type SliceOf, variable } from '../../core/settings'

const lambdaReason = 'a browser session cannot outlive one Lambda invocation, so browser_open is refused there'

export const browserSessionSettings = defineSettings({
  title: 'Browser sessions',
  description:
    'The stateful `browser_*` tools: each session is an isolated browser context in the shared Chromium, held by the instance that opened it. See [browser-sessions.md](browser-sessions.md).',
  variables: {
    TOOLPORT_BROWSER_SESSIONS: variable({
      schema: z.coerce.number().int().min(0).max(256),
      default: '8',
      runtimeDefaults: { lambda: '0' },
      fixedOn: { lambda: lambdaReason },
      description: 'Sessions open at once on this instance; `0` turns browser sessions off. Past it: 429.',
    }),
    TOOLPORT_BROWSER_SESSIONS_PER_TENANT: variable({
      schema: positiveInteger.max(256),
      default: '3',
      description: 'Sessions one tenant may hold open at once on this instance. Past it: 429.',
    }),
    TOOLPORT_BROWSER_SESSION_IDLE_SECONDS: variable({
      schema: positiveInteger.max(86_400),
      default: '300',
      description: 'A session no call touched for this long is closed.',
    }),
    TOOLPORT_BROWSER_SESSION_MAX_SECONDS: variable({
      schema: positiveInteger.max(86_400),
      default: '1800',
      description: 'A session is closed this long after it opened, however busy.',
    }),
    TOOLPORT_BROWSER_SESSION_PAGES: variable({
      schema: positiveInteger.max(50),
      default: '5',
      description: 'Tabs one session may have; a page opening more has the new one closed (and reported).',
    }),
    TOOLPORT_BROWSER_ACTION_SECONDS: variable({
      schema: positiveInteger.max(600),
      default: '30',
      description: 'Deadline of one browser action (navigate, click, wait, download, …); past it: 504.',
    }),
    TOOLPORT_INSTANCE_ID: variable({
      schema: z
        .string()
        .regex(/^[a-z0-9]{1,16}$/, 'lower-case letters and digits, at most 16')
        .optional(),
      description:
        'This instance’s name inside browser session ids, so a load balancer (or a client) can route a session to the instance that holds it. Unset: random at start.',
    }),
    TOOLPORT_BROWSER_ALLOW_EVALUATE: variable({
      schema: booleanText,
      default: 'false',
      description: '`true` offers `browser_evaluate` (JavaScript run in the page). Off by default.',
    }),
  },
  build: (values) => ({
    maxSessions: values.TOOLPORT_BROWSER_SESSIONS,
    maxPerTenant: values.TOOLPORT_BROWSER_SESSIONS_PER_TENANT,
    idleMs: values.TOOLPORT_BROWSER_SESSION_IDLE_SECONDS * 1000,
    maxLifeMs: values.TOOLPORT_BROWSER_SESSION_MAX_SECONDS * 1000,
    maxPages: values.TOOLPORT_BROWSER_SESSION_PAGES,
    actionMs: values.TOOLPORT_BROWSER_ACTION_SECONDS * 1000,
    instanceId: values.TOOLPORT_INSTANCE_ID,
    allowEvaluate: values.TOOLPORT_BROWSER_ALLOW_EVALUATE,
  }),
})

export type BrowserSessionSettings = SliceOf<typeof browserSessionSettings>
