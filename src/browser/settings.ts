import { z } from 'zod'
import { defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'

export const browserSettings = defineSettings({
  title: 'Browser',
  description:
    'The shared headless Chromium of `pdf_generation` (HTML), `screenshot` and rendered `web_fetch`; launched on first use.',
  variables: {
    TOOLPORT_BROWSER: variable({
      schema: z.enum(['auto', 'off']),
      default: 'auto',
      description: '`off`: no Chromium (HTML PDFs and screenshots answer 503, Markdown PDFs use pdf-lib).',
    }),
    TOOLPORT_CHROMIUM_PATH: variable({
      schema: z.string().min(1).optional(),
      description:
        'A system Chromium instead of the one `@sparticuz/chromium` ships and extracts to `$TMPDIR` on first use.',
    }),
    TOOLPORT_BROWSER_PAGES: variable({
      schema: positiveInteger.max(32),
      default: '2',
      description: 'Pages rendering at once; up to 100 more wait, then 429.',
    }),
  },
  build: (values) => ({
    enabled: values.TOOLPORT_BROWSER === 'auto',
    chromiumPath: values.TOOLPORT_CHROMIUM_PATH,
    pages: values.TOOLPORT_BROWSER_PAGES,
  }),
})

export type BrowserSettings = SliceOf<typeof browserSettings>
