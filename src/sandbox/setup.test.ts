import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../core/logger'
import { loadSettings } from '../core/settings'
import { sandboxSettings } from './settings'
import { setupShell } from './setup'

let work: string
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'toolport-setup-'))
})
afterAll(async () => {
  await rm(work, { recursive: true, force: true })
})

const settings = (sandbox: string) =>
  loadSettings(sandboxSettings, { TOOLPORT_SANDBOX: sandbox, TOOLPORT_WORK_DIR: join(work, sandbox) }, 'node')
const options = { maxFileBytes: 1024 * 1024 }

describe('setupShell', () => {
  it('never falls back to an unsandboxed run when bubblewrap is missing', async () => {
    const setup = await setupShell(settings('auto'), { PATH: join(work, 'empty-path') }, silentLogger, options)
    expect(setup.shell).toBeUndefined()
    expect(setup.problem).toMatch(/bubblewrap is not installed.*apt-get install bubblewrap/)
  })

  it('reports an operator-disabled sandbox', async () => {
    const setup = await setupShell(settings('none'), process.env, silentLogger, options)
    expect(setup.shell).toBeUndefined()
    expect(setup.problem).toMatch(/TOOLPORT_SANDBOX=none/)
  })
})
