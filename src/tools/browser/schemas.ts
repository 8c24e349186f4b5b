import { z } from 'zod'
import type { BrowserSession, BrowserSessions, PageState } from '../../browser/session/types'
import { ToolError } from '../../core/errors'
import type { ToolContext } from '../tool'

/** Shapes and helpers every browser_* tool shares (names after Playwright MCP's, so models know them). */
export const SessionId = z.string().min(1).max(80).describe('The session_id browser_open answered.')

export const Ref = z.string().min(1).max(40).describe('Exact element ref from the latest snapshot, e.g. "e12".')

export const ElementNote = z
  .string()
  .max(300)
  .optional()
  .describe('Human-readable description of the element, for the record (e.g. "Sign in button").')

export const SnapshotChars = z
  .number()
  .int()
  .min(500)
  .max(90_000)
  .default(20_000)
  .describe('Longest snapshot returned. Default: 20,000 characters.')

export const BlockedRequest = z.object({
  url: z.string(),
  reason: z.string(),
  kind: z.string().describe('What asked for it: Document, XHR, Fetch, Image, Script, Popup, …'),
})

export const PageStateFields = {
  session_id: z.string(),
  url: z.string().describe('URL of the current tab.'),
  title: z.string(),
  snapshot: z
    .string()
    .describe('Accessibility snapshot: one "- role "name" [state] [ref=eN]" line per element; act on refs.'),
  snapshot_truncated: z.boolean(),
  tabs: z.array(z.object({ index: z.number().int(), url: z.string(), title: z.string(), current: z.boolean() })),
  blocked: z
    .array(BlockedRequest)
    .describe(
      'Requests and windows refused since the last answer (private, loopback and metadata addresses, other schemes).',
    ),
  dialogs: z
    .array(z.object({ type: z.string(), message: z.string(), action: z.enum(['dismissed', 'accepted']) }))
    .describe('Dialogs (alert, confirm, prompt, beforeunload) handled since the last answer.'),
  hint: z.string().optional(),
}

export const PageStateOutput = z.object(PageStateFields)

export function requireSessions(context: Pick<ToolContext<'browserSessions'>, 'browserSessions'>): BrowserSessions {
  const sessions = context.browserSessions
  if (!sessions) {
    throw new ToolError('unavailable', 'Browser sessions are not available on this deployment.', {
      notOffered: true,
      hint: 'They need Chromium on a long-lived instance; use screenshot or web_fetch with render for one-shot pages.',
    })
  }
  return sessions
}

export function session(context: ToolContext<'browserSessions'>, id: string): BrowserSession {
  return requireSessions(context).get(context.workspace.tenant, id)
}

/** An action's answer: the page's state, with a hint when something was cut or refused. */
export function answer(sessionId: string, state: PageState) {
  const hints = [
    state.snapshot_truncated
      ? 'The snapshot was cut; call browser_snapshot with a larger max_chars (up to 90,000) to see the rest.'
      : '',
    state.blocked.length > 0
      ? 'Some requests were refused (see blocked): private and metadata addresses cannot be reached.'
      : '',
  ].filter(Boolean)
  return { session_id: sessionId, ...state, ...(hints.length > 0 ? { hint: hints.join(' ') } : {}) }
}
