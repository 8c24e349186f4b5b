import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { ToolError } from '../../core/errors'
import { captureImage } from '../capture'
import type { Downloads } from './downloads'
import { box, call, isFileInput, resolveRef } from './elements'
import type { ActionDeps, ActionKit } from './kit'
import type { BrowserSession } from './types'

/** Screenshots, PDFs, uploads and downloads: what crosses between the page and files. */
export function createFileActions(
  deps: ActionDeps,
  { run, act, click }: ActionKit,
): Pick<BrowserSession, 'screenshot' | 'pdf' | 'upload' | 'download'> {
  return {
    screenshot: ({ ref, fullPage, format }) =>
      run(async () => {
        const tab = deps.tab()
        const clip = ref ? await box(tab, await resolveRef(tab, ref)) : undefined
        return captureImage(tab.page, { format, quality: 80, fullPage, clip })
      }),
    pdf: () => run(async () => new Uint8Array(await deps.tab().page.pdf({ printBackground: true, timeout: 0 }))),
    upload: (ref, files) =>
      act(async (tab) => {
        const element = await resolveRef(tab, ref)
        const kind = await call<string>(tab, element, isFileInput)
        if (!kind) {
          throw new ToolError('conflict', `The element ${ref} is not a file input.`, {
            hint: 'Use the ref of the file input ("Choose File" button) from the snapshot.',
            details: { field: 'ref' },
          })
        }
        if (kind === 'single' && files.length > 1) {
          throw new ToolError('validation', `The file input ${ref} takes one file, not ${files.length}.`, {
            hint: 'Send one path.',
            details: { field: 'paths' },
          })
        }
        const paths: string[] = []
        for (const [index, file] of files.entries()) {
          // The page sees the file's name; on disk it lives in the session's folder under a fixed one.
          const path = join(deps.folder, `upload-${Date.now()}-${index}`, file.name)
          await mkdir(dirname(path), { recursive: true })
          await writeFile(path, file.bytes)
          paths.push(path)
        }
        await tab.cdp.send('DOM.setFileInputFiles', { files: paths, backendNodeId: element.backendNodeId })
      }),
    download: async (ref, maxBytes) => {
      let file: Awaited<ReturnType<Downloads['next']>> | undefined
      const state = await act(async (tab) => {
        const before = deps.downloads.count
        if (ref !== undefined) {
          await click(tab, ref, {})
          file = await deps.downloads.next(before, deps.limits.actionMs - 1_000)
        } else {
          file = (await deps.downloads.last()) ?? (await deps.downloads.next(before, deps.limits.actionMs - 1_000))
        }
      })
      if (!file) throw new Error('no download')
      if (file.bytes.byteLength > maxBytes) {
        throw new ToolError('size_exceeded', `The download is larger than ${maxBytes} bytes.`, {
          hint: 'Only files within the file size limit can be saved.',
        })
      }
      return { file: { name: file.name, mimeType: 'application/octet-stream', bytes: file.bytes }, state }
    },
  }
}
