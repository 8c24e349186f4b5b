import { ToolError } from '../../core/errors'
import type { Tab } from './tab'

/**
 * Elements by ref, and what is done to them. Refs are backend DOM node ids (see snapshot.ts); the
 * checks and value changes run in an isolated world of toolport's own, so no page script sees them or
 * can change what the DOM methods they call do.
 */
export interface Element {
  backendNodeId: number
  objectId: string
}

function stale(ref: string): ToolError {
  return new ToolError('conflict', `The element ${ref} is no longer on the page.`, {
    hint: 'The page changed since that snapshot: call browser_snapshot and use a ref from it.',
    details: { field: 'ref' },
  })
}

export function parseRef(ref: string): number {
  const match = /^e(\d{1,12})$/.exec(ref)
  if (!match) {
    throw new ToolError('validation', `${JSON.stringify(ref.slice(0, 40))} is not an element ref.`, {
      hint: 'Use a ref exactly as browser_snapshot shows it, such as "e12".',
      details: { field: 'ref' },
    })
  }
  return Number(match[1])
}

interface FrameTree {
  frame: { id: string }
  childFrames?: FrameTree[]
}

function frameIds(tree: FrameTree): string[] {
  return [tree.frame.id, ...(tree.childFrames ?? []).flatMap(frameIds)]
}

/** The element in toolport's isolated world of its frame: the main frame first, then the others. */
async function resolveIsolated(tab: Tab, backendNodeId: number): Promise<string | undefined> {
  const tree = (await tab.cdp.send('Page.getFrameTree')).frameTree as FrameTree
  for (const frameId of frameIds(tree)) {
    try {
      const world = await tab.cdp.send('Page.createIsolatedWorld', { frameId, worldName: 'toolport' })
      const resolved = await tab.cdp.send('DOM.resolveNode', {
        backendNodeId,
        executionContextId: world.executionContextId,
      })
      if (resolved.object.objectId) return resolved.object.objectId
    } catch {
      // Not in this frame's document (or the frame is in another process): try the next.
    }
  }
  return undefined
}

/** The element behind a ref in the tab's current documents; 409 when it is gone. */
export async function resolveRef(tab: Tab, ref: string): Promise<Element> {
  const backendNodeId = parseRef(ref)
  const objectId = await resolveIsolated(tab, backendNodeId).catch(() => undefined)
  if (!objectId) throw stale(ref)
  const connected = await call<boolean>(tab, { backendNodeId, objectId }, 'function () { return this.isConnected }')
  if (!connected) throw stale(ref)
  return { backendNodeId, objectId }
}

/** Runs one of toolport's own functions on the element, in the isolated world; returns its value. */
export async function call<T>(tab: Tab, element: Element, declaration: string, ...args: unknown[]): Promise<T> {
  const answer = await tab.cdp.send('Runtime.callFunctionOn', {
    objectId: element.objectId,
    functionDeclaration: declaration,
    arguments: args.map((value) => ({ value })),
    returnByValue: true,
    awaitPromise: true,
  })
  if (answer.exceptionDetails) throw new Error(answer.exceptionDetails.text)
  return answer.result.value as T
}

/** The element's centre in CSS pixels of the viewport, after scrolling it into view. */
export async function centre(tab: Tab, element: Element, ref: string): Promise<{ x: number; y: number }> {
  await tab.cdp.send('DOM.scrollIntoViewIfNeeded', { backendNodeId: element.backendNodeId }).catch(() => {})
  const quads = await tab.cdp
    .send('DOM.getContentQuads', { backendNodeId: element.backendNodeId })
    .then((answer) => answer.quads)
    .catch(() => [])
  const quad = quads.find((candidate) => candidate.length === 8)
  if (!quad) {
    throw new ToolError('conflict', `The element ${ref} is not visible, so it cannot be clicked or hovered.`, {
      hint: 'Scroll to it (browser_scroll), open what hides it, or use another ref from browser_snapshot.',
      details: { field: 'ref' },
    })
  }
  const xs = [quad[0], quad[2], quad[4], quad[6]] as number[]
  const ys = [quad[1], quad[3], quad[5], quad[7]] as number[]
  return { x: xs.reduce((a, b) => a + b) / 4, y: ys.reduce((a, b) => a + b) / 4 }
}

/** The element's box in page coordinates, for a screenshot of it. */
export async function box(tab: Tab, element: Element) {
  await tab.cdp.send('DOM.scrollIntoViewIfNeeded', { backendNodeId: element.backendNodeId }).catch(() => {})
  return call<{ x: number; y: number; width: number; height: number }>(
    tab,
    element,
    'function () { const r = this.getBoundingClientRect(); return { x: r.left + scrollX, y: r.top + scrollY, width: Math.max(1, r.width), height: Math.max(1, r.height) } }',
  )
}

/** Selects the options whose value or label is listed; answers the values now selected. */
export const selectOptions = `function (wanted) {
  if (!(this instanceof HTMLSelectElement)) return { error: 'not a select' }
  const labels = Array.from(this.options, (option) => option.value + ' (' + option.label + ')')
  const matches = Array.from(this.options).filter((option) => wanted.includes(option.value) || wanted.includes(option.label))
  if (matches.length === 0) return { error: 'no option', labels }
  if (!this.multiple && matches.length > 1) matches.length = 1
  for (const option of this.options) option.selected = matches.includes(option)
  this.dispatchEvent(new Event('input', { bubbles: true }))
  this.dispatchEvent(new Event('change', { bubbles: true }))
  return { selected: matches.map((option) => option.value) }
}`

/** Focuses an editable element and selects its content, so typing replaces it. */
export const focusForTyping = `function () {
  const editable = this.isContentEditable || this instanceof HTMLTextAreaElement ||
    (this instanceof HTMLInputElement && !['checkbox','radio','file','submit','button','reset','image','range','color'].includes(this.type))
  if (!editable) return false
  this.focus()
  if (this.isContentEditable) { const range = document.createRange(); range.selectNodeContents(this); const selection = getSelection(); selection.removeAllRanges(); selection.addRange(range) }
  else this.select()
  return true
}`

export const isFileInput = `function () { return this instanceof HTMLInputElement && this.type === 'file' ? (this.multiple ? 'multiple' : 'single') : '' }`
