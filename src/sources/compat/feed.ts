import type { FeedFile } from '../host/source-host'
import { type CompatPackName, compatPacks } from './packs'

/** The packs TOOLPORT_COMPAT_PACKS names, as the files of the operator feed "compat". */
export function compatFeed(names: readonly CompatPackName[]): FeedFile[] {
  return names.map((name) => ({
    name: `${compatPacks[name].id}.json`,
    text: JSON.stringify(compatPacks[name]),
    format: 'json',
  }))
}
