import type { Hono } from 'hono'
import type { ObjectStore } from '../storage/store'
import { isToolError } from '../tools/errors'
import type { AppEnv } from './env'

interface CheckResult {
  status: 'ok' | 'error' | 'absent'
  detail?: string
  [key: string]: unknown
}

export function registerHealthRoutes(app: Hono<AppEnv>, storage: ObjectStore): void {
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
      sandbox: { status: 'absent', detail: 'no sandbox is configured (execute_command is not part of this build yet)' },
      browser: { status: 'absent', detail: 'no browser is configured (no tool needs one yet)' },
    }
    const ready = storageCheck.status === 'ok'
    context.header('Cache-Control', 'no-store')
    return context.json({ status: ready ? 'ready' : 'not_ready', checks }, ready ? 200 : 503)
  })
}
