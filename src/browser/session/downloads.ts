import { readFile, rm } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { Browser, BrowserContext, CDPSession } from 'puppeteer-core'
import { ToolError } from '../../core/errors'
import type { Tab } from './tab'

export interface FinishedDownload {
  name: string
  url: string
  bytes: Uint8Array
}

/**
 * Downloads of one session's context land in the session's own folder under Chromium's names (the
 * download's guid), never in a path a page could choose; toolport reads them from there and the tool
 * writes them into the workspace. A download that grows past the size limit is cancelled as it goes.
 */
export interface Downloads {
  /** Downloads finished or failed so far. */
  readonly count: number
  /** The next download to finish after `count` others had, within timeoutMs. */
  next(after: number, timeoutMs: number): Promise<FinishedDownload>
  /** The last finished one, if any: the same file again when it was read already. */
  last(): Promise<FinishedDownload | undefined>
  close(): Promise<void>
}

interface Entry {
  guid: string
  url: string
  name: string
  state: 'inProgress' | 'completed' | 'canceled' | 'tooLarge'
  /** Whether a frame of this session's context started it; undefined until known. */
  ours: boolean | undefined
  reported: boolean
}

function frameIds(tree: { frame: { id: string }; childFrames?: unknown[] }): string[] {
  const children = (tree.childFrames ?? []) as Array<Parameters<typeof frameIds>[0]>
  return [tree.frame.id, ...children.flatMap(frameIds)]
}

/**
 * Whether the frame that began a download belongs to this context. Browser-level download events
 * come from every context of the browser (every session's, every tenant's), so each is checked: a
 * main frame's id is its target's, whose browserContextId CDP tells; a same-process iframe is in
 * the frame tree of one of the session's tabs.
 */
async function ownsFrame(session: CDPSession, context: BrowserContext, tabs: () => readonly Tab[], frameId: string) {
  const target = await session.send('Target.getTargetInfo', { targetId: frameId }).catch(() => undefined)
  if (target) return target.targetInfo.browserContextId === context.id
  for (const tab of tabs()) {
    const tree = await tab.cdp.send('Page.getFrameTree').catch(() => undefined)
    if (tree && frameIds(tree.frameTree).includes(frameId)) return true
  }
  return false
}

export async function createDownloads(
  browser: Browser,
  context: BrowserContext,
  folder: string,
  maxBytes: number,
  tabs: () => readonly Tab[],
): Promise<Downloads> {
  const session = await browser.target().createCDPSession()
  const entries = new Map<string, Entry>()
  const finished: Entry[] = []
  // The last file read, kept so `last()` can answer it again after its file was removed.
  let kept: { guid: string; file: FinishedDownload } | undefined
  const waiters = new Set<() => void>()
  const wake = () => {
    for (const waiter of waiters) waiter()
  }

  /** Counts a download of this context once it is over (and cancels one that grew too large). */
  function settle(entry: Entry): void {
    if (!entry.ours || entry.reported || entry.state === 'inProgress') return
    entry.reported = true
    entries.delete(entry.guid)
    if (entry.state === 'tooLarge') {
      void session.send('Browser.cancelDownload', { guid: entry.guid, browserContextId: context.id }).catch(() => {})
    }
    finished.push(entry)
    wake()
  }

  session.on(
    'Browser.downloadWillBegin',
    (event: { frameId: string; guid: string; url: string; suggestedFilename: string }) => {
      const entry: Entry = {
        guid: event.guid,
        url: event.url,
        name: basename(event.suggestedFilename || 'download').slice(0, 200) || 'download',
        state: 'inProgress',
        ours: undefined,
        reported: false,
      }
      entries.set(event.guid, entry)
      void ownsFrame(session, context, tabs, event.frameId).then((ours) => {
        entry.ours = ours
        if (ours) settle(entry)
        else entries.delete(entry.guid)
      })
    },
  )
  session.on('Browser.downloadProgress', (event: { guid: string; receivedBytes: number; state: Entry['state'] }) => {
    const entry = entries.get(event.guid)
    if (entry?.state !== 'inProgress') return
    if (event.receivedBytes > maxBytes) entry.state = 'tooLarge'
    else if (event.state !== 'inProgress') entry.state = event.state
    settle(entry)
  })
  await session.send('Browser.setDownloadBehavior', {
    behavior: 'allowAndName',
    browserContextId: context.id,
    downloadPath: folder,
    eventsEnabled: true,
  })

  async function read(entry: Entry): Promise<FinishedDownload> {
    if (entry.state === 'tooLarge') {
      throw new ToolError('size_exceeded', `The download ${entry.name} is larger than ${maxBytes} bytes.`, {
        hint: 'Only files within the file size limit can be saved to the workspace.',
      })
    }
    if (entry.state !== 'completed') {
      throw new ToolError('connection', `The download ${entry.name} was cancelled or failed.`, {
        hint: 'Check the blocked requests of the answer, or try again.',
      })
    }
    if (kept?.guid === entry.guid) return kept.file
    const path = join(folder, entry.guid)
    const file = { name: entry.name, url: entry.url, bytes: new Uint8Array(await readFile(path)) }
    await rm(path, { force: true })
    kept = { guid: entry.guid, file }
    return file
  }

  return {
    get count() {
      return finished.length
    },
    async next(after, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      while (finished.length <= after) {
        const left = deadline - Date.now()
        if (left <= 0) {
          throw new ToolError('timeout', 'No download finished in time.', {
            hint: 'Give the ref of the link or button that starts the download, or wait and call browser_download without a ref.',
          })
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, left)
          function done() {
            clearTimeout(timer)
            waiters.delete(done)
            resolve()
          }
          waiters.add(done)
        })
      }
      return read(finished[after] as Entry)
    },
    async last() {
      const entry = finished.at(-1)
      return entry ? read(entry) : undefined
    },
    async close() {
      await session.detach().catch(() => {})
    },
  }
}
