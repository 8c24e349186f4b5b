import { z } from 'zod'
import { previewOutputFile } from '../../downloads/handoff'
import { OutputPreviewSchema } from '../../downloads/schemas'
import type { DryRunContext, Tool } from '../tool'
import { AddressVerdict, addressVerdict } from '../web/dry-runs'
import { requireHttp } from '../web/require-http'
import { downloadExtension, screenshotExtension } from './file-tools'
import { requireSessions } from './schemas'

// One dry run for every browser_* tool that acts: it finds the session (this tenant's, or 404), says
// which page the action would work on, and checks what the call checks before it acts (the target
// URL's address, the files to upload, the output path), without touching the page.

export const BrowserPreview = z.object({
  tool: z.string(),
  action: z.string().describe("The call's title: what it would do."),
  session_id: z.string().optional(),
  page: z
    .object({ url: z.string(), title: z.string() })
    .optional()
    .describe('The current tab the action would work on.'),
  target: z.object({ url: z.string(), address: AddressVerdict }).optional(),
  uploads: z.array(z.object({ path: z.string(), size: z.number().int() })).optional(),
  output: OutputPreviewSchema.optional(),
})

type BrowserInput = {
  session_id?: string
  url?: string
  paths?: string[]
  output_path?: string
  format?: 'png' | 'jpeg'
}

// What the dry run asks of the deployment: the session, the address rules, where a file would go.
const dryRunUses = ['browserSessions', 'http', 'links'] as const

async function browserDryRun(
  tool: Tool,
  input: BrowserInput,
  context: DryRunContext<(typeof dryRunUses)[number]>,
  action: string,
) {
  const sessions = requireSessions(context)
  const tenant = context.workspace.tenant
  const preview: z.output<typeof BrowserPreview> = { tool: tool.name, action }
  if (input.session_id !== undefined) {
    preview.session_id = input.session_id
    preview.page = await sessions.get(tenant, input.session_id).location()
  } else {
    sessions.admits(tenant)
  }
  if (input.url !== undefined) {
    preview.target = { url: input.url, address: await addressVerdict(requireHttp(context.http), input.url) }
  }
  if (input.paths) {
    preview.uploads = []
    for (const path of input.paths) {
      const file = await context.workspace.readFile(path, context.limits.maxFileBytes)
      preview.uploads.push({ path: file.path, size: file.bytes.byteLength })
    }
  }
  const extension = outputExtension(tool.name, input)
  if (extension !== undefined) {
    preview.output = await previewOutputFile(
      { workspace: context.workspace, limits: context.limits, links: context.links },
      { outputPath: input.output_path, suggestedName: preview.page?.title || 'page', extension },
    )
  }
  return preview
}

/** The extension of the file a browser_* call would save, as its run chooses it; undefined: it saves none. */
function outputExtension(name: string, input: BrowserInput): string | undefined {
  if (name === 'browser_pdf') return 'pdf'
  if (name === 'browser_screenshot') return screenshotExtension(input.format ?? 'png')
  if (name === 'browser_download') return downloadExtension(input.output_path)
  return undefined
}

/**
 * The browser tool with a call title that names its element or session, and, where it acts (every
 * effect but read), a dry run, with the services that dry run uses.
 */
export function withBrowserDryRun(tool: Tool): Tool {
  const title = (input: BrowserInput & { element?: string; ref?: string }) => {
    const own = tool.callTitle?.(input as never)
    if (own) return own
    const what = input.element ?? input.ref
    if (what) return `${tool.title}: ${what}`
    return input.session_id ? `${tool.title} in session ${input.session_id.slice(0, 12)}` : tool.title
  }
  if (tool.effect === 'read') return { ...tool, callTitle: title as never }
  return {
    ...tool,
    uses: [...new Set([...(tool.uses ?? []), ...dryRunUses])],
    callTitle: title as never,
    dryRun: (input, context) => browserDryRun(tool, input as BrowserInput, context, title(input as BrowserInput)),
    preview: BrowserPreview,
  }
}
