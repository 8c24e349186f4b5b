import { existsSync } from 'node:fs'
import { mkdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * @sparticuz/chromium extracts its binary to $TMPDIR/chromium on first use and trusts any file it
 * finds there. Two processes extracting at once (two vitest workers, two service instances) race:
 * one spawns the binary while the other still writes it (spawn ETXTBSY). Within a process the
 * browser service shares one promise; across processes this lock directory serializes extraction
 * and a marker file says when the binary is complete.
 */
const lockStaleMs = 120_000
const pollMs = 100

async function acquire(lock: string, deadline: number): Promise<boolean> {
  for (;;) {
    try {
      await mkdir(lock)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const age = await stat(lock).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    )
    // A holder that died leaves its lock behind; after the longest plausible extraction it is taken over.
    if (age > lockStaleMs) await rm(lock, { recursive: true, force: true })
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
}

export async function extractChromium(timeoutMs = 180_000): Promise<string> {
  const { default: chromium } = await import('@sparticuz/chromium')
  const folder = tmpdir()
  const marker = join(folder, 'toolport-chromium.ready')
  const binary = join(folder, 'chromium')
  if (existsSync(marker) && existsSync(binary)) return chromium.executablePath()
  const lock = join(folder, 'toolport-chromium.lock')
  if (!(await acquire(lock, Date.now() + timeoutMs)))
    throw new Error('timed out waiting for another process to extract Chromium')
  try {
    const path = await chromium.executablePath()
    await writeFile(marker, `${path}\n`)
    return path
  } finally {
    await rm(lock, { recursive: true, force: true })
  }
}

/**
 * @sparticuz/chromium's recommended flags without the three that weaken a multi-process browser, and,
 * with `zygote`, without `--no-zygote`: renderers forked from the zygote share its initialized pages
 * (the V8 snapshot, ICU, fonts), which made each browser session's proportional memory about a third
 * smaller here (bench/browser-sessions.ts: 28 → 22 MB a session). Lambda keeps `--no-zygote`, as the package
 * ships it for Lambda's sandbox, where zygote start-up has been seen to fail.
 */
export async function chromiumArgs(options: { zygote?: boolean } = {}): Promise<string[]> {
  const { default: chromium } = await import('@sparticuz/chromium')
  const unwanted = new Set(['--single-process', '--disable-web-security', '--allow-running-insecure-content'])
  if (options.zygote) unwanted.add('--no-zygote')
  return chromium.args.filter((arg) => !unwanted.has(arg) && !arg.startsWith('--headless'))
}
