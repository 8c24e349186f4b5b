import { z } from 'zod'
import { defineTool } from '../tool'
import { answer, ElementNote, PageStateOutput, Ref, SessionId, session } from './schemas'

const Target = { session_id: SessionId, element: ElementNote, ref: Ref }

export const browserClick = defineTool({
  name: 'browser_click',
  title: 'Click',
  description: 'Click an element of the current tab by its ref from the snapshot. Answers with the new snapshot.',
  effect: 'external',
  uses: ['browserSessions'],
  // It may submit a form or press a button that changes or deletes something on the site.
  hints: { destructive: true },
  input: z.strictObject({
    ...Target,
    double_click: z.boolean().default(false),
    button: z.enum(['left', 'right', 'middle']).default('left'),
  }),
  output: PageStateOutput,
  callTitle: (input) => `Click ${input.element ?? input.ref}`,
  async run(input, context) {
    const state = await session(context, input.session_id).click(input.ref, {
      double: input.double_click,
      button: input.button,
    })
    return answer(input.session_id, state)
  },
})

export const browserType = defineTool({
  name: 'browser_type',
  title: 'Type text',
  description: 'Replace the text of an editable element (ref) with text; with submit, press Enter afterwards.',
  effect: 'external',
  uses: ['browserSessions'],
  // It may submit a form or press a button that changes or deletes something on the site.
  hints: { destructive: true },
  input: z.strictObject({
    ...Target,
    text: z.string().max(100_000),
    submit: z.boolean().default(false).describe('Press Enter after typing.'),
  }),
  output: PageStateOutput,
  callTitle: (input) => `Type into ${input.element ?? input.ref}`,
  async run(input, context) {
    return answer(input.session_id, await session(context, input.session_id).type(input.ref, input.text, input.submit))
  },
})

export const browserSelectOption = defineTool({
  name: 'browser_select_option',
  title: 'Select option',
  description: 'Select one or more options (by value or label) in a dropdown (ref).',
  effect: 'external',
  uses: ['browserSessions'],
  // It may submit a form or press a button that changes or deletes something on the site.
  hints: { destructive: true },
  input: z.strictObject({
    ...Target,
    values: z.array(z.string().max(1000)).min(1).max(100).describe('Option values or labels to select.'),
  }),
  output: PageStateOutput,
  async run(input, context) {
    return answer(input.session_id, await session(context, input.session_id).selectOption(input.ref, input.values))
  },
})

export const browserPressKey = defineTool({
  name: 'browser_press_key',
  title: 'Press key',
  description: 'Press a key in the current tab, e.g. Enter, Tab, Escape, ArrowDown, PageDown or a character.',
  effect: 'external',
  uses: ['browserSessions'],
  // It may submit a form or press a button that changes or deletes something on the site.
  hints: { destructive: true },
  input: z.strictObject({ session_id: SessionId, key: z.string().min(1).max(32) }),
  output: PageStateOutput,
  async run(input, context) {
    return answer(input.session_id, await session(context, input.session_id).pressKey(input.key))
  },
})

export const browserHover = defineTool({
  name: 'browser_hover',
  title: 'Hover',
  description: 'Move the mouse over an element (ref), e.g. to open a menu.',
  effect: 'external',
  uses: ['browserSessions'],
  input: z.strictObject(Target),
  output: PageStateOutput,
  async run(input, context) {
    return answer(input.session_id, await session(context, input.session_id).hover(input.ref))
  },
})
