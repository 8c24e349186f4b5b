import { type AxNode, cutSnapshot, formatSnapshot } from './snapshot'
import type { Tab } from './tab'

/** The trees of the frames in the page's own process, by their iframe element (nested ones too). */
async function frameTrees(tab: Tab, nodes: readonly AxNode[], found = new Map<number, AxNode[]>(), depth = 0) {
  if (depth > 3) return found
  for (const node of nodes) {
    if (node.role?.value !== 'Iframe' || node.backendDOMNodeId === undefined || found.size >= 20) continue
    try {
      const owner = await tab.cdp.send('DOM.describeNode', { backendNodeId: node.backendDOMNodeId })
      const frameId = owner.node.frameId
      if (!frameId) continue
      const tree = (await tab.cdp.send('Accessibility.getFullAXTree', { frameId })) as { nodes: AxNode[] }
      found.set(node.backendDOMNodeId, tree.nodes)
      await frameTrees(tab, tree.nodes, found, depth + 1)
    } catch {
      // A frame in another process (a cross-site iframe) has no tree here: it shows as its iframe line.
    }
  }
  return found
}

/** The tab's snapshot, frames of its own process included, cut to the budget. */
export async function snapshotOf(tab: Tab, maxChars: number): Promise<{ text: string; truncated: boolean }> {
  const tree = (await tab.cdp.send('Accessibility.getFullAXTree')) as { nodes: AxNode[] }
  return cutSnapshot(formatSnapshot(tree.nodes, await frameTrees(tab, tree.nodes)), maxChars)
}
