import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { defineTool } from '../tool'
import { requireHttp } from '../web/require-http'
import { answer, PageStateFields, requireSessions, SessionId, SnapshotChars, session } from './schemas'

const userAgents = {
  default: undefined,
  desktop: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36',
  mobile:
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile Safari/537.36',
} as const

const SessionTimes = {
  opened_at: z.string(),
  expires_at: z.string().describe('When the session ends however busy it is (its maximum life).'),
  idle_expires_at: z.string().describe('When the session ends unless another call touches it.'),
}

export const browserOpen = defineTool({
  name: 'browser_open',
  title: 'Open browser session',
  description:
    'Open a browser session (an isolated browser with its own cookies) and optionally load a URL. Returns session_id for the other browser_* tools and an accessibility snapshot with element refs.',
  effect: 'external',
  uses: ['browserSessions', 'http'],
  input: z.strictObject({
    url: z.string().min(1).max(8192).optional().describe('Public http(s) URL to load first.'),
    viewport: z
      .strictObject({ width: z.number().int().min(200).max(3840), height: z.number().int().min(200).max(2160) })
      .default({ width: 1280, height: 800 })
      .describe('Viewport size in CSS pixels. Default: 1280 × 800.'),
    locale: z
      .string()
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'a BCP 47 language tag such as en-US')
      .optional()
      .describe('Preferred language sent to sites, e.g. "de-DE".'),
    user_agent: z.enum(['default', 'desktop', 'mobile']).default('default').describe('User agent preset.'),
    dialogs: z
      .enum(['dismiss', 'accept'])
      .default('dismiss')
      .describe('What to do with alert/confirm/prompt dialogs; each is reported either way. Default: dismiss.'),
  }),
  output: z.object({ ...PageStateFields, ...SessionTimes }),
  callTitle: (input) => `Open browser${input.url ? ` at ${input.url}` : ''}`,
  async run(input, context) {
    const sessions = requireSessions(context)
    const http = requireHttp(context.http)
    sessions.admits(context.workspace.tenant)
    if (input.url !== undefined) await http.check(input.url)
    const { session: opened, summary } = await sessions.open(context.workspace.tenant, {
      viewport: input.viewport,
      locale: input.locale,
      userAgent: userAgents[input.user_agent],
      dialogs: input.dialogs,
      checkRequest: (url) => http.check(url),
    })
    try {
      const state = input.url === undefined ? await opened.state() : await opened.navigate(input.url)
      return { ...answer(opened.id, state), ...summary }
    } catch (error) {
      // A first page that cannot load leaves no session behind.
      await sessions.close(context.workspace.tenant, opened.id).catch(() => {})
      throw error
    }
  },
})

export const browserClose = defineTool({
  name: 'browser_close',
  title: 'Close browser session',
  description:
    'Close a browser session and everything in it (tabs, cookies, downloads not saved). With tab, close only that tab.',
  effect: 'write',
  uses: ['browserSessions'],
  input: z.strictObject({
    session_id: SessionId,
    tab: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Index of one tab to close (see browser_tabs); omit to end the session.'),
  }),
  output: z.object({
    session_id: z.string(),
    closed: z.enum(['session', 'tab']),
    tabs: PageStateFields.tabs.optional(),
  }),
  async run(input, context) {
    if (input.tab !== undefined) {
      const state = await session(context, input.session_id).closeTab(input.tab)
      return { session_id: input.session_id, closed: 'tab' as const, tabs: state.tabs }
    }
    await requireSessions(context).close(context.workspace.tenant, input.session_id)
    return { session_id: input.session_id, closed: 'session' as const }
  },
})

export const browserTabs = defineTool({
  name: 'browser_tabs',
  title: 'List or select browser tabs',
  description:
    'List the tabs of a browser session, or select one (index) so the next actions work on it. Answers with the current tab’s snapshot.',
  effect: 'read',
  uses: ['browserSessions'],
  input: z.strictObject({
    session_id: SessionId,
    action: z.enum(['list', 'select']).default('list'),
    index: z.number().int().min(0).optional().describe('Tab to select (with action select).'),
    max_chars: SnapshotChars,
  }),
  output: z.object(PageStateFields),
  async run(input, context) {
    const browser = session(context, input.session_id)
    if (input.action === 'select') {
      if (input.index === undefined) {
        throw new ToolError('validation', 'action select needs index.', {
          hint: 'Send the index of a tab from browser_tabs with action list.',
          details: { field: 'index' },
        })
      }
      return answer(input.session_id, await browser.selectTab(input.index))
    }
    return answer(input.session_id, await browser.state(input.max_chars))
  },
})
