/**
 * The accessibility snapshot a model reads: Chromium's accessibility tree as an indented list in the
 * shape Playwright MCP made familiar (`- role "name" [attributes] [ref=e12]`), with a ref on every
 * element one can act on. A ref is the element's backend DOM node id, so it stays the same across
 * snapshots of one document and goes stale, detectably, when the element or the document goes away.
 */

/** Chromium's Accessibility.AXNode, the members used here. */
export interface AxNode {
  nodeId: string
  ignored?: boolean
  role?: { value?: unknown }
  name?: { value?: unknown }
  value?: { value?: unknown }
  properties?: Array<{ name: string; value?: { value?: unknown } }>
  childIds?: string[]
  backendDOMNodeId?: number
}

const actionable = new Set([
  'button',
  'link',
  'textbox',
  'searchbox',
  'combobox',
  'listbox',
  'option',
  'checkbox',
  'radio',
  'switch',
  'slider',
  'spinbutton',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'treeitem',
  'textarea',
])

/** Roles that only group: shown through their children unless they carry a name or a ref. */
const transparent = new Set([
  'generic',
  'none',
  'presentation',
  'LineBreak',
  'InlineTextBox',
  'paragraph',
  'Section',
  'LabelText',
])

const shownStates = ['checked', 'pressed', 'selected', 'expanded', 'disabled', 'required', 'level'] as const

function text(value: unknown): string {
  return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : value === undefined ? '' : String(value)
}

function property(node: AxNode, name: string): unknown {
  return node.properties?.find((entry) => entry.name === name)?.value?.value
}

export function refOf(node: AxNode): string | undefined {
  if (node.backendDOMNodeId === undefined) return undefined
  const role = text(node.role?.value)
  if (actionable.has(role) || (property(node, 'focusable') === true && role !== 'RootWebArea'))
    return `e${node.backendDOMNodeId}`
  return undefined
}

function attributes(node: AxNode, ref: string | undefined): string {
  const parts: string[] = []
  for (const state of shownStates) {
    const value = property(node, state)
    if (value === undefined || value === false || value === 'false') continue
    parts.push(value === true || value === 'true' ? `[${state}]` : `[${state}=${text(value)}]`)
  }
  if (property(node, 'focused') === true) parts.push('[active]')
  if (ref) parts.push(`[ref=${ref}]`)
  return parts.length > 0 ? ` ${parts.join(' ')}` : ''
}

/**
 * The snapshot text of a whole tree (nodes as Accessibility.getFullAXTree lists them, root first).
 * `frames` gives the trees of frames by the backend node id of their iframe element: they are shown
 * under it, so the form in a frame can be filled like any other.
 */
export function formatSnapshot(
  nodes: readonly AxNode[],
  frames: ReadonlyMap<number, readonly AxNode[]> = new Map(),
): string {
  const byId = new Map(nodes.map((node) => [node.nodeId, node]))
  const lines: string[] = []
  const root = nodes[0]
  if (!root) return ''

  // Text already said by the element's own name is not repeated as its children.
  function walk(node: AxNode, depth: number, parentName: string): void {
    const children = (node.childIds ?? []).map((id) => byId.get(id)).filter((child) => child !== undefined)
    const role = text(node.role?.value)
    const name = text(node.name?.value)
    const ref = refOf(node)
    const skip = node.ignored || role === 'RootWebArea' || (transparent.has(role) && !name && !ref)
    if (skip) {
      for (const child of children) walk(child, depth, parentName)
      return
    }
    if (role === 'StaticText') {
      if (name && !parentName.includes(name)) lines.push(`${'  '.repeat(depth)}- text: ${JSON.stringify(name)}`)
      return
    }
    const value = text(node.value?.value)
    const said = `${name}\n${value}`
    const label = `${'  '.repeat(depth)}- ${role}${name ? ` ${JSON.stringify(name)}` : ''}${attributes(node, ref)}`
    const before = lines.length
    lines.push(label)
    for (const child of children) walk(child, depth + 1, said)
    const frame = node.backendDOMNodeId === undefined ? undefined : frames.get(node.backendDOMNodeId)
    if (frame)
      lines.push(
        ...formatSnapshot(frame, frames)
          .split('\n')
          .filter(Boolean)
          .map((line) => `${'  '.repeat(depth + 1)}${line}`),
      )
    const hasChildren = lines.length > before + 1
    const suffix = value && value !== name ? `: ${JSON.stringify(value)}` : hasChildren ? ':' : ''
    lines[before] = `${label}${suffix}`
  }

  walk(root, 0, '')
  return lines.join('\n')
}

/** Cuts a snapshot at a line boundary within the budget. */
export function cutSnapshot(snapshot: string, maxChars: number): { text: string; truncated: boolean } {
  if (snapshot.length <= maxChars) return { text: snapshot, truncated: false }
  const cut = snapshot.lastIndexOf('\n', maxChars)
  return { text: snapshot.slice(0, cut > 0 ? cut : maxChars), truncated: true }
}
