import { readFile, rm } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { Browser, BrowserContext } from 'puppeteer-core'
import { ToolError } from '../../core/errors'

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
  /** The last finished one, if any. */
  last(): Promise<FinishedDownload | undefined>
  close(): Promise<void>
}

interface Entry {
  guid: string
  url: string
  name: string
  state: 'inProgress' | 'completed' | 'canceled' | 'tooLarge'
}

export async function createDownloads(
  browser: Browser,
  context: BrowserContext,
  folder: string,
  maxBytes: number,
): Promise<Downloads> {
  const session = await browser.target().createCDPSession()
  const entries = new Map<string, Entry>()
  const finished: Entry[] = []
  const waiters = new Set<() => void>()
  const wake = () => {
    for (const waiter of waiters) waiter()
  }

  session.on('Browser.downloadWillBegin', (event: { guid: string; url: string; suggestedFilename: string }) => {
    entries.set(event.guid, {
      guid: event.guid,
      url: event.url,
      name: basename(event.suggestedFilename || 'download').slice(0, 200) || 'download',
      state: 'inProgress',
    })
  })
  session.on('Browser.downloadProgress', (event: { guid: string; receivedBytes: number; state: Entry['state'] }) => {
    const entry = entries.get(event.guid)
    if (entry?.state !== 'inProgress') return
    if (event.receivedBytes > maxBytes) {
      entry.state = 'tooLarge'
      void session.send('Browser.cancelDownload', { guid: event.guid, browserContextId: context.id }).catch(() => {})
    } else if (event.state === 'inProgress') return
    else entry.state = event.state
    finished.push(entry)
    wake()
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
    const path = join(folder, entry.guid)
    const bytes = new Uint8Array(await readFile(path))
    await rm(path, { force: true })
    return { name: entry.name, url: entry.url, bytes }
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
