import type { Downloads } from './downloads'
import type { Tab } from './tab'
import type { BlockedRequest, DialogReport, PageState, SessionLimits } from './types'

/** What a session lends its actions. */
export interface ActionDeps {
  tab(): Tab
  tabs(): readonly Tab[]
  current(): number
  select(index: number): void
  drain(): { blocked: BlockedRequest[]; dialogs: DialogReport[] }
  /** Resolves when the tabs the page opened so far are taken in. */
  adopted(): Promise<unknown>
  folder: string
  downloads: Downloads
  limits: SessionLimits
  ended(): string | undefined
  sessionId: string
}

export type ClickOptions = { double?: boolean; button?: 'left' | 'right' | 'middle' }

/** What the file actions share with the others: the runner, act (do, settle, answer) and click. */
export interface ActionKit {
  run: <T>(work: () => Promise<T>) => Promise<T>
  act: (work: (tab: Tab) => Promise<void>) => Promise<PageState>
  click: (tab: Tab, ref: string, options?: ClickOptions) => Promise<void>
}
