import { z } from 'zod'
import { baseNameOf, extensionOf } from '../../core/mime'
import { fileOutput, saveOutputFile } from '../../downloads/handoff'
import { FileOutputFields, OutputPath } from '../../downloads/schemas'
import { defineTool } from '../tool'
import { answer, ElementNote, PageStateFields, PageStateOutput, Ref, SessionId, session } from './schemas'

function suggested(url: string): string {
  try {
    return new URL(url).hostname || 'page'
  } catch {
    return 'page'
  }
}

export const browserScreenshot = defineTool({
  name: 'browser_screenshot',
  title: 'Screenshot of the session',
  description:
    'A PNG or JPEG of the current tab (viewport, full page, or one element by ref), saved to the workspace with a download link. Use browser_snapshot to act on the page.',
  effect: 'write',
  uses: ['browserSessions', 'http', 'links'],
  input: z.strictObject({
    session_id: SessionId,
    ref: Ref.optional().describe('Only this element.'),
    element: ElementNote,
    full_page: z.boolean().default(false).describe('The whole scrollable page, not only the viewport.'),
    format: z.enum(['png', 'jpeg']).default('png'),
    output_path: OutputPath,
  }),
  output: z.object({
    ...FileOutputFields,
    session_id: z.string(),
    url: z.string(),
    image: z
      .object({ mime_type: z.string(), data: z.string() })
      .optional()
      .describe('The image itself (base64), only over MCP, where it is shown to the model as an image block.'),
  }),
  async run(input, context) {
    const browser = session(context, input.session_id)
    const bytes = await browser.screenshot({
      ...(input.ref !== undefined ? { ref: input.ref } : {}),
      fullPage: input.full_page,
      format: input.format,
    })
    const state = await browser.location()
    const file = await saveOutputFile(context, {
      outputPath: input.output_path,
      suggestedName: suggested(state.url),
      extension: screenshotExtension(input.format),
      bytes,
    })
    const mime = input.format === 'jpeg' ? 'image/jpeg' : 'image/png'
    return {
      ...fileOutput([file]),
      session_id: input.session_id,
      url: state.url,
      ...(context.inlineImages ? { image: { mime_type: mime, data: Buffer.from(bytes).toString('base64') } } : {}),
    }
  },
})

export const browserPdf = defineTool({
  name: 'browser_pdf',
  title: 'PDF of the session page',
  description: 'Print the current tab to PDF, saved to the workspace with a download link.',
  effect: 'write',
  uses: ['browserSessions', 'http', 'links'],
  input: z.strictObject({ session_id: SessionId, output_path: OutputPath }),
  output: z.object({ ...FileOutputFields, session_id: z.string(), url: z.string() }),
  async run(input, context) {
    const browser = session(context, input.session_id)
    const bytes = await browser.pdf()
    const state = await browser.location()
    const file = await saveOutputFile(context, {
      outputPath: input.output_path,
      suggestedName: state.title || suggested(state.url),
      extension: 'pdf',
      bytes,
    })
    return { ...fileOutput([file]), session_id: input.session_id, url: state.url }
  },
})

export const browserFileUpload = defineTool({
  name: 'browser_file_upload',
  title: 'Upload files',
  description: 'Put workspace files into a file input (ref) of the current tab, as if chosen in the file dialog.',
  effect: 'external',
  uses: ['browserSessions'],
  // It may replace what the site holds.
  hints: { destructive: true },
  input: z.strictObject({
    session_id: SessionId,
    ref: Ref.describe('Ref of the file input.'),
    element: ElementNote,
    paths: z.array(z.string().min(1).max(1024)).min(1).max(10).describe('Workspace paths of the files.'),
  }),
  output: PageStateOutput,
  async run(input, context) {
    const browser = session(context, input.session_id)
    const files = []
    for (const path of input.paths) {
      const file = await context.workspace.readFile(path, context.limits.maxFileBytes)
      files.push({ name: baseNameOf(file.path), bytes: file.bytes })
    }
    return answer(input.session_id, await browser.upload(input.ref, files))
  },
})

export const browserDownload = defineTool({
  name: 'browser_download',
  title: 'Download a file',
  description:
    'Click a link or button (ref) that downloads a file and save the file to the workspace; without ref, save the last finished download.',
  effect: 'external',
  uses: ['browserSessions', 'http', 'links'],
  input: z.strictObject({
    session_id: SessionId,
    ref: Ref.optional(),
    element: ElementNote,
    output_path: OutputPath,
  }),
  output: z.object({ ...FileOutputFields, ...PageStateFields }),
  async run(input, context) {
    const browser = session(context, input.session_id)
    const { file, state } = await browser.download(input.ref, context.limits.maxFileBytes)
    const saved = await saveOutputFile(context, {
      outputPath: input.output_path,
      suggestedName: file.name.replace(/\.[^.]*$/, '') || 'download',
      extension: downloadExtension(input.output_path, file.name),
      bytes: file.bytes,
    })
    return { ...fileOutput([saved]), ...answer(input.session_id, state) }
  },
})

/** The extension of a browser_screenshot file: the run and its dry run name it alike. */
export function screenshotExtension(format: 'png' | 'jpeg'): string {
  return format === 'jpeg' ? 'jpg' : 'png'
}

/**
 * The extension of a browser_download file: output_path's, else the name the page gave the file (only
 * its extension is kept, the workspace path is toolport's choice), else bin. A dry run, before any
 * download, passes no name.
 */
export function downloadExtension(outputPath: string | undefined, fileName = ''): string {
  const wanted = outputPath === undefined ? '' : extensionOf(outputPath)
  return [wanted, extensionOf(fileName)].find((candidate) => /^[a-z0-9]{1,5}$/.test(candidate)) ?? 'bin'
}
