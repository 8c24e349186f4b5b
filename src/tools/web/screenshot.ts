import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { fileOutput, saveOutputFile } from '../../downloads/handoff'
import { FileOutputFields, OutputPath } from '../../downloads/schemas'
import { assertEmbeddedImagesFit } from '../embedded-images'
import { assertHtmlNesting } from '../html-nesting'
import { defineTool } from '../tool'
import { ScreenshotPreview, screenshotDryRun } from './dry-runs'
import { requireHttp } from './require-http'

export const screenshot = defineTool({
  name: 'screenshot',
  title: 'Screenshot',
  description:
    'Take a PNG or JPEG screenshot of a public web page (url) or of HTML you provide, at a chosen viewport size, optionally the full page. The image is stored in the workspace and returned as a download link.',
  effect: 'external',
  uses: ['browser', 'http', 'links'],
  input: z
    .strictObject({
      url: z.string().min(1).max(8192).optional().describe('Public http(s) URL to load. Give url or html.'),
      html: z
        .string()
        .max(2_000_000)
        .optional()
        .describe('HTML to render instead of a URL (no scripts, no external requests).'),
      width: z.number().int().min(100).max(3840).default(1280).describe('Viewport width in CSS pixels. Default: 1280.'),
      height: z.number().int().min(100).max(2160).default(800).describe('Viewport height in CSS pixels. Default: 800.'),
      full_page: z.boolean().default(false).describe('Capture the whole scrollable page, not only the viewport.'),
      format: z.enum(['png', 'jpeg']).default('png'),
      output_path: OutputPath,
    })
    .superRefine((input, context) => {
      if ((input.url === undefined) === (input.html === undefined)) {
        context.addIssue({ code: 'custom', path: ['url'], message: 'give exactly one of url and html' })
      }
    }),
  output: z.object({ ...FileOutputFields, width: z.number().int(), height: z.number().int() }),
  callTitle: (input) => `Screenshot ${input.url?.replace(/^https?:\/\//i, '').slice(0, 80) ?? 'HTML'}`,
  dryRun: screenshotDryRun,
  preview: ScreenshotPreview,
  async run(input, context) {
    const { browser, http, signal } = context
    if (!browser) {
      throw new ToolError('unavailable', 'No browser is available on this server.', {
        hint: 'screenshot needs Chromium; it is not installed or not enabled here.',
      })
    }
    const options = { width: input.width, height: input.height, fullPage: input.full_page, format: input.format }
    const url = input.url
    if (url !== undefined) await requireHttp(http).check(url)
    if (input.html !== undefined) {
      assertHtmlNesting(input.html, 'html')
      await assertEmbeddedImagesFit(input.html, 'html')
    }
    const target =
      url !== undefined
        ? { url, checkRequest: (request: string) => requireHttp(http).check(request) }
        : { html: input.html ?? '' }
    const bytes = await browser.screenshot(target, options, signal)
    const file = await saveOutputFile(context, {
      outputPath: input.output_path,
      suggestedName: input.url ? new URL(input.url).hostname : 'screenshot',
      extension: input.format === 'jpeg' ? 'jpg' : 'png',
      bytes,
    })
    return { ...fileOutput([file]), width: input.width, height: input.height }
  },
})
