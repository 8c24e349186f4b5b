/**
 * Browser sessions as tools see them: types only, with no puppeteer import, so tool code stays
 * portable. The engine lives beside this file and is built by the Node runtime.
 */
import type { BlockedRequest } from '../target-guard'

export type { BlockedRequest }

export interface SessionOpenOptions {
  viewport: { width: number; height: number }
  /** BCP 47, e.g. "en-US": Accept-Language and navigator.language. */
  locale?: string | undefined
  userAgent?: string | undefined
  /** What happens to alert/confirm/prompt dialogs (beforeunload is always accepted); each is reported either way. */
  dialogs: 'dismiss' | 'accept'
  /** Throws for an http(s) URL the session may not load: called for every request of every target. */
  checkRequest(url: string): Promise<void>
}

export interface SessionLimits {
  /** Tabs a session may have. */
  maxPages: number
  /** Deadline of one action. */
  actionMs: number
  /** Largest download kept. */
  maxDownloadBytes: number
}

export interface TabInfo {
  index: number
  url: string
  title: string
  current: boolean
}

export interface DialogReport {
  type: string
  message: string
  action: 'dismissed' | 'accepted'
}

export interface ConsoleMessage {
  type: string
  text: string
  url?: string
}

/** What every action answers: where the page is now and what happened on the way. */
export interface PageState {
  url: string
  title: string
  snapshot: string
  /** True when the snapshot was cut to its budget. */
  snapshot_truncated: boolean
  tabs: TabInfo[]
  /** Requests and windows refused since the last answer. */
  blocked: BlockedRequest[]
  /** Dialogs handled since the last answer. */
  dialogs: DialogReport[]
}

export interface DownloadedFile {
  name: string
  mimeType: string
  bytes: Uint8Array
}

export type ScrollTarget = { ref: string } | { x: number; y: number }

export interface BrowserSession {
  readonly id: string
  navigate(url: string): Promise<PageState>
  back(): Promise<PageState>
  state(snapshotChars?: number): Promise<PageState>
  /** Where the current tab is, without a snapshot (and without taking the reports an action answers). */
  location(): Promise<{ url: string; title: string }>
  click(ref: string, options?: { double?: boolean; button?: 'left' | 'right' | 'middle' }): Promise<PageState>
  type(ref: string, text: string, submit: boolean): Promise<PageState>
  selectOption(ref: string, values: string[]): Promise<PageState>
  pressKey(key: string): Promise<PageState>
  hover(ref: string): Promise<PageState>
  waitFor(condition: { text?: string; textGone?: string; seconds?: number }): Promise<PageState>
  scroll(target: ScrollTarget): Promise<PageState>
  screenshot(options: { ref?: string; fullPage: boolean; format: 'png' | 'jpeg' }): Promise<Uint8Array>
  pdf(): Promise<Uint8Array>
  upload(ref: string, files: Array<{ name: string; bytes: Uint8Array }>): Promise<PageState>
  /** Clicks ref (when given) and waits for the download it starts, or takes the last one finished. */
  download(ref: string | undefined, maxBytes: number): Promise<{ file: DownloadedFile; state: PageState }>
  selectTab(index: number): Promise<PageState>
  closeTab(index: number): Promise<PageState>
  console(limit: number): ConsoleMessage[]
  evaluate(expression: string): Promise<unknown>
}

export interface SessionSummary {
  session_id: string
  opened_at: string
  expires_at: string
  idle_expires_at: string
}

export interface BrowserSessions {
  /** Throws unless the tenant may open a session now (sessions off: 503; a limit reached: 429). */
  admits(tenant: string): void
  /** Opens a session for the tenant; 429 past the instance's or the tenant's limit. */
  open(tenant: string, options: SessionOpenOptions): Promise<{ session: BrowserSession; summary: SessionSummary }>
  /** The tenant's session (and its life renewed); 404 for another tenant's or an unknown one. */
  get(tenant: string, id: string): BrowserSession
  summary(tenant: string, id: string): SessionSummary
  close(tenant: string, id: string): Promise<void>
  readonly instanceId: string
  readonly evaluateAllowed: boolean
  readonly open_count: number
  closeAll(): Promise<void>
  /** Tells `listener` of every session that ends (closed, idle, too old): its tenant and how long it was open. */
  onEnded?(listener: (tenant: string, seconds: number) => void): void
}
