import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { defineTool } from '../tool'
import { requireHttp } from '../web/require-http'
import { answer, ElementNote, PageStateOutput, Ref, SessionId, SnapshotChars, session } from './schemas'

export const browserNavigate = defineTool({
  name: 'browser_navigate',
  title: 'Navigate',
  description: 'Load a URL in the current tab of a browser session. Answers with the page’s URL, title and snapshot.',
  effect: 'external',
  uses: ['browserSessions', 'http'],
  input: z.strictObject({ session_id: SessionId, url: z.string().min(1).max(8192).describe('Public http(s) URL.') }),
  output: PageStateOutput,
  callTitle: (input) => `Navigate to ${input.url}`,
  async run(input, context) {
    const browser = session(context, input.session_id)
    await requireHttp(context.http).check(input.url)
    return answer(input.session_id, await browser.navigate(input.url))
  },
})

export const browserBack = defineTool({
  name: 'browser_back',
  title: 'Go back',
  description: 'Go back to the previous page in the current tab of a browser session.',
  effect: 'external',
  uses: ['browserSessions'],
  input: z.strictObject({ session_id: SessionId }),
  output: PageStateOutput,
  async run(input, context) {
    return answer(input.session_id, await session(context, input.session_id).back())
  },
})

export const browserSnapshot = defineTool({
  name: 'browser_snapshot',
  title: 'Page snapshot',
  description:
    'The accessibility snapshot of the current tab: the page as a list of elements, each one you can act on with a ref. Better than a screenshot for acting on a page.',
  effect: 'read',
  uses: ['browserSessions'],
  input: z.strictObject({ session_id: SessionId, max_chars: SnapshotChars }),
  output: PageStateOutput,
  async run(input, context) {
    return answer(input.session_id, await session(context, input.session_id).state(input.max_chars))
  },
})

export const browserWaitFor = defineTool({
  name: 'browser_wait_for',
  title: 'Wait for',
  description:
    'Wait until a text appears (text) or disappears (text_gone) in the current tab, or for a number of seconds; bounded by the action deadline.',
  effect: 'read',
  uses: ['browserSessions'],
  input: z
    .strictObject({
      session_id: SessionId,
      text: z.string().min(1).max(500).optional().describe('Text to wait for.'),
      text_gone: z.string().min(1).max(500).optional().describe('Text to wait to disappear.'),
      time: z.number().min(0).max(600).optional().describe('Seconds to wait (with text: the longest wait).'),
    })
    .refine((input) => input.text !== undefined || input.text_gone !== undefined || input.time !== undefined, {
      message: 'give text, text_gone or time',
    }),
  output: PageStateOutput,
  async run(input, context) {
    const state = await session(context, input.session_id).waitFor({
      ...(input.text !== undefined ? { text: input.text } : {}),
      ...(input.text_gone !== undefined ? { textGone: input.text_gone } : {}),
      ...(input.time !== undefined ? { seconds: input.time } : {}),
    })
    return answer(input.session_id, state)
  },
})

export const browserScroll = defineTool({
  name: 'browser_scroll',
  title: 'Scroll',
  description: 'Scroll the current tab by x/y pixels (a mouse wheel), or until the element ref is in view.',
  effect: 'external',
  uses: ['browserSessions'],
  input: z.strictObject({
    session_id: SessionId,
    ref: Ref.optional(),
    element: ElementNote,
    x: z.number().int().min(-100_000).max(100_000).default(0).describe('Pixels to the right (negative: left).'),
    y: z.number().int().min(-100_000).max(100_000).default(0).describe('Pixels down (negative: up).'),
  }),
  output: PageStateOutput,
  async run(input, context) {
    const browser = session(context, input.session_id)
    if (input.ref === undefined && input.x === 0 && input.y === 0) {
      throw new ToolError('validation', 'Nothing to scroll: give ref, or x or y.', {
        hint: 'Send y: 600 to scroll down a screen, or the ref of an element to bring into view.',
        details: { field: 'y' },
      })
    }
    const target = input.ref !== undefined ? { ref: input.ref } : { x: input.x, y: input.y }
    return answer(input.session_id, await browser.scroll(target))
  },
})
