import { withBrowserDryRun } from './dry-runs'
import { browserDownload, browserFileUpload, browserPdf, browserScreenshot } from './file-tools'
import { browserClick, browserHover, browserPressKey, browserSelectOption, browserType } from './interaction-tools'
import { browserBack, browserNavigate, browserScroll, browserSnapshot, browserWaitFor } from './page-tools'
import { browserConsole, browserEvaluate } from './reading-tools'
import { browserClose, browserOpen, browserTabs } from './session-tools'

/**
 * The stateful browser_* family, in the order a model meets them; each that acts previews its call
 * with ?dry_run=true (and for an approver) without touching the page.
 */
export const browserTools = [
  browserOpen,
  browserNavigate,
  browserBack,
  browserSnapshot,
  browserClick,
  browserType,
  browserSelectOption,
  browserPressKey,
  browserHover,
  browserWaitFor,
  browserScroll,
  browserScreenshot,
  browserPdf,
  browserFileUpload,
  browserDownload,
  browserTabs,
  browserConsole,
  browserEvaluate,
  browserClose,
].map(withBrowserDryRun)
