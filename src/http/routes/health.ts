import type { Hono } from 'hono'
import type { BrowserService } from '../../browser/types'
import { isToolError } from '../../core/errors'
import type { ShellService } from '../../sandbox/shell-service'
import type { ObjectStore } from '../../storage/store'
import type { AppEnv } from '../env'

interface CheckResult {
  status: 'ok' | 'error' | 'absent'
  detail?: string
  [key: string]: unknown
}

export interface HealthDeps {
  shell: ShellService | undefined
  shellProblem: string | undefined
  shellEnabled: boolean
  /** The operator chose a sandbox explicitly, so the service is not ready without it. */
  shellRequired: boolean
  /** The shared Chromium; it launches on first use, so "idle" is ready too. */
  browser?: BrowserService | undefined
}

function browserCheck(browser: BrowserService | undefined): CheckResult {
  if (!browser) return { status: 'absent', detail: 'no browser: html PDFs answer 503, markdown uses pdf-lib' }
  const { status, ...rest } = browser.status()
  return { status: status === 'error' ? 'error' : 'ok', state: status, ...rest }
}

function sandboxCheck({ shell, shellProblem, shellEnabled }: HealthDeps): CheckResult {
  if (shell) {
    const status = shell.status()
    return { ...status, active: shell.limiter.active, queued: shell.limiter.queued }
  }
  if (!shellEnabled) return { status: 'absent', detail: 'execute_command is not enabled' }
  return { status: 'error', detail: shellProblem ?? 'no sandbox is available' }
}

export function registerHealthRoutes(app: Hono<AppEnv>, storage: ObjectStore, health: HealthDeps): void {
  app.get('/healthz', (context) => context.json({ status: 'ok' }))

  app.get('/readyz', async (context) => {
    const storageCheck: CheckResult = await storage.check().then(
      (): CheckResult => ({ status: 'ok', driver: storage.driver }),
      (error: unknown): CheckResult => ({
        status: 'error',
        driver: storage.driver,
        detail: isToolError(error) ? error.message : 'storage check failed',
      }),
    )
    const checks: Record<string, CheckResult> = {
      storage: storageCheck,
      sandbox: sandboxCheck(health),
      browser: browserCheck(health.browser),
    }
    const ready = storageCheck.status === 'ok' && !(health.shellRequired && checks.sandbox?.status === 'error')
    context.header('Cache-Control', 'no-store')
    return context.json({ status: ready ? 'ready' : 'not_ready', checks }, ready ? 200 : 503)
  })
}
