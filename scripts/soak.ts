// `npm run soak`: ten minutes of mixed load on the built service; RSS and open descriptors must stay flat.
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { soak } from '../test/support/soak'

const minutes = Number(process.env.SOAK_MINUTES ?? 10)
const root = new URL('..', import.meta.url).pathname
execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' })
const dataDir = await mkdtemp(join(tmpdir(), 'toolport-soak-'))
try {
  const report = await soak({ root, dataDir, rounds: Math.max(2, minutes * 2), roundSeconds: 30, connections: 32 })
  console.log('| round | requests | RSS (MB) | open fds |')
  console.log('| ---: | ---: | ---: | ---: |')
  for (const sample of report.samples) {
    console.log(
      `| ${sample.round} | ${sample.requests} | ${(sample.rssBytes / 1e6).toFixed(1)} | ${sample.openFiles} |`,
    )
  }
  console.log(
    `\n5xx: ${report.status5xx}, socket errors: ${report.errors}, RSS growth after warm-up: ${(report.rssGrowthBytes / 1e6).toFixed(1)} MB, fd growth: ${report.openFilesGrowth}`,
  )
  const flat =
    report.status5xx === 0 && report.errors === 0 && report.rssGrowthBytes <= 50e6 && report.openFilesGrowth <= 10
  console.log(flat ? 'flat: OK' : 'NOT FLAT')
  process.exitCode = flat ? 0 : 1
} finally {
  await rm(dataDir, { recursive: true, force: true })
}
