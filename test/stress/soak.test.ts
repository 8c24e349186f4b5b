import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { soak } from '../support/soak'

const root = new URL('../..', import.meta.url).pathname

// The short form of `npm run soak`: a few rounds instead of ten minutes, same bounds.
it('keeps resident memory and open descriptors flat under repeated load', async () => {
  await promisify(execFile)(process.execPath, ['scripts/build.mjs'], { cwd: root })
  const dataDir = await mkdtemp(join(tmpdir(), 'toolport-soak-'))
  try {
    const report = await soak({ root, dataDir, rounds: 3, roundSeconds: 2, connections: 32 })
    expect(report.status5xx).toBe(0)
    expect(report.errors).toBe(0)
    expect(report.lost).toBe(0)
    expect(report.openFilesGrowth).toBeLessThanOrEqual(10)
    expect(report.rssGrowthBytes).toBeLessThanOrEqual(50 * 1024 * 1024)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}, 120_000)
