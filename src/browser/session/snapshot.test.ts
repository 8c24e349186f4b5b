import { describe, expect, it } from 'vitest'
import { type AxNode, cutSnapshot, formatSnapshot, refOf } from './snapshot'

const node = (
  nodeId: string,
  role: string,
  name: string,
  childIds: string[] = [],
  extra: Partial<AxNode> = {},
): AxNode => ({
  nodeId,
  role: { value: role },
  name: { value: name },
  childIds,
  backendDOMNodeId: Number(nodeId),
  ...extra,
})

describe('formatSnapshot', () => {
  it('shows roles, names, states and refs; hoists unnamed groups; says a text only once', () => {
    const nodes = [
      node('1', 'RootWebArea', 'Login', ['2']),
      node('2', 'generic', '', ['3', '4', '6', '8']),
      node('3', 'heading', 'Sign in', ['30'], { properties: [{ name: 'level', value: { value: 1 } }] }),
      node('30', 'StaticText', 'Sign in'),
      node('4', 'textbox', 'User', ['5'], {
        value: { value: 'alice' },
        properties: [{ name: 'focused', value: { value: true } }],
      }),
      node('5', 'StaticText', 'alice'),
      node('6', 'checkbox', 'Remember me', [], { properties: [{ name: 'checked', value: { value: 'true' } }] }),
      node('8', 'StaticText', 'Forgot it?'),
    ]
    expect(formatSnapshot(nodes)).toBe(
      [
        '- heading "Sign in" [level=1]',
        '- textbox "User" [active] [ref=e4]: "alice"',
        '- checkbox "Remember me" [checked] [ref=e6]',
        '- text: "Forgot it?"',
      ].join('\n'),
    )
  })

  it('gives refs to actionable and focusable elements only, and shows a frame under its iframe', () => {
    expect(refOf(node('9', 'button', 'Go'))).toBe('e9')
    expect(refOf(node('9', 'heading', 'Title'))).toBeUndefined()
    expect(refOf(node('9', 'generic', '', [], { properties: [{ name: 'focusable', value: { value: true } }] }))).toBe(
      'e9',
    )
    const page = [node('1', 'RootWebArea', 'Shop', ['2']), node('2', 'Iframe', '')]
    const frame = [node('10', 'RootWebArea', 'Pay', ['11']), node('11', 'button', 'Pay now')]
    expect(formatSnapshot(page, new Map([[2, frame]]))).toBe('- Iframe:\n  - button "Pay now" [ref=e11]')
  })

  it('cuts at a line within the budget and says so', () => {
    const text = Array.from({ length: 100 }, (_, index) => `- link "Item ${index}" [ref=e${index}]`).join('\n')
    const cut = cutSnapshot(text, 500)
    expect(cut.truncated).toBe(true)
    expect(cut.text.length).toBeLessThanOrEqual(500)
    expect(text.startsWith(cut.text)).toBe(true)
    expect(cut.text.endsWith(']')).toBe(true)
    expect(cutSnapshot('short', 500)).toEqual({ text: 'short', truncated: false })
  })
})
