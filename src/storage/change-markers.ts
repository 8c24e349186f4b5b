import { markerKeys } from './layout'
import type { ObjectStore } from './store'

/**
 * Change markers let a reader that keeps a copy of a workspace elsewhere (the sandbox's local mirror,
 * one per service instance) learn with one HEAD, instead of a listing of every object, that no writer
 * of toolport changed the workspace since the reader last listed it.
 *
 * Each reader owns one marker object per workspace, outside the workspace's own keys (so no listing of
 * files ever shows it). A reader writes its marker right before it lists the workspace; every writer,
 * after changing objects of the workspace, deletes the markers of all readers. A reader that still finds
 * its marker, with the etag it wrote, therefore knows that no write finished after its listing began: a
 * write done earlier deleted no marker of its listing, but the listing saw it. Deletes need no
 * compare-and-swap, which object stores do not all offer, and a writer that spares its own marker (the
 * mirror committing a run's changes) keeps its copy trusted without hiding anyone else's write.
 *
 * Writers outside toolport (another program writing the bucket) delete no marker: readers therefore also
 * list in full at a fixed period (docs/sandbox.md, "The workspace travels").
 */
/** Where the markers of a workspace live: below sync-markers/, followed by the workspace's own prefix. */
export function changeMarkerPrefix(workspacePrefix: string): string {
  return markerKeys.folder(workspacePrefix)
}

/** The marker of one reader (an id of letters, digits and dashes) for a workspace. */
export function changeMarkerKey(workspacePrefix: string, reader: string): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(reader)) throw new Error(`Invalid change marker reader ${JSON.stringify(reader)}`)
  return changeMarkerPrefix(workspacePrefix) + reader
}

/**
 * Called by a writer once its change of the workspace's objects has landed (and also after a failed
 * one that may have landed in part): every reader then lists the workspace again. `keep` names the one
 * marker to leave, the writer's own, when the writer is itself a reader that knows what it wrote.
 */
export async function markWorkspaceChanged(
  storage: ObjectStore,
  workspacePrefix: string,
  options: { keep?: string } = {},
): Promise<void> {
  const prefix = changeMarkerPrefix(workspacePrefix)
  let cursor: string | undefined
  do {
    const page = await storage.list(prefix, cursor === undefined ? {} : { cursor })
    const stale = page.objects.filter((object) => object.key !== options.keep)
    await Promise.all(stale.map((object) => storage.delete(object.key)))
    cursor = page.cursor
  } while (cursor)
}
