import type { ObjectInfo, ObjectStore } from './store'

/** Every object under `prefix`, all pages of the listing, in key order. */
export async function listAll(storage: ObjectStore, prefix: string): Promise<ObjectInfo[]> {
  const objects: ObjectInfo[] = []
  let cursor: string | undefined
  do {
    const page = await storage.list(prefix, cursor === undefined ? {} : { cursor })
    objects.push(...page.objects)
    cursor = page.cursor
  } while (cursor)
  return objects
}
