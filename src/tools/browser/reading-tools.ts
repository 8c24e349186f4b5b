import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { defineTool } from '../tool'
import { requireSessions, SessionId, session } from './schemas'

export const browserConsole = defineTool({
  name: 'browser_console',
  title: 'Console messages',
  description: 'The recent console messages (log, warning, error, page errors) of a browser session, oldest first.',
  effect: 'read',
  uses: ['browserSessions'],
  input: z.strictObject({
    session_id: SessionId,
    limit: z.number().int().min(1).max(200).default(50).describe('Most recent messages returned. Default: 50.'),
  }),
  output: z.object({
    session_id: z.string(),
    messages: z.array(z.object({ type: z.string(), text: z.string(), url: z.string().optional() })),
  }),
  async run(input, context) {
    return { session_id: input.session_id, messages: session(context, input.session_id).console(input.limit) }
  },
})

export const browserEvaluate = defineTool({
  name: 'browser_evaluate',
  title: 'Run JavaScript in the page',
  description:
    'Evaluate a JavaScript expression in the current tab and return its JSON value. Off unless the operator enables it (TOOLPORT_BROWSER_ALLOW_EVALUATE).',
  effect: 'external',
  uses: ['browserSessions'],
  // Script in the page can do anything the page can.
  hints: { destructive: true },
  input: z.strictObject({
    session_id: SessionId,
    expression: z.string().min(1).max(20_000).describe('A JavaScript expression, e.g. "document.title".'),
  }),
  output: z.object({ session_id: z.string(), value: z.unknown() }),
  async run(input, context) {
    if (!requireSessions(context).evaluateAllowed) {
      throw new ToolError('permission_denied', 'Running JavaScript in browser pages is turned off on this server.', {
        hint: 'Use browser_snapshot and the other browser_* tools; the operator can enable browser_evaluate with TOOLPORT_BROWSER_ALLOW_EVALUATE=true.',
      })
    }
    const browser = session(context, input.session_id)
    const value = await browser.evaluate(input.expression)
    const text = JSON.stringify(value) ?? 'null'
    if (text.length > 50_000) {
      throw new ToolError('size_exceeded', 'The value is larger than 50,000 characters as JSON.', {
        hint: 'Return less, for example a slice or a count.',
      })
    }
    return { session_id: input.session_id, value: JSON.parse(text) as unknown }
  },
})
