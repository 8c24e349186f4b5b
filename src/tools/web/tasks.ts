import type { ReadablePage } from './readable'

/**
 * web_fetch's CPU-heavy steps as offload tasks (see tools/offload.ts). Readability, linkedom and turndown
 * load on the first HTML page, not at every start; in a worker they load once per worker.
 */
export const webTasks = {
  /** The readable main text: seconds to a minute of CPU for pages of many elements or huge tables. */
  'read-page': async ({ html, url }: { html: string; url: string }): Promise<ReadablePage> =>
    (await import('./readable')).extractReadable(html, url),
  /** All the text of a page in one linear pass: the answer when read-page runs out of time. */
  'plain-page': async ({ html, note }: { html: string; note: string }): Promise<ReadablePage> =>
    (await import('./readable')).plainPage(html, note),
}
