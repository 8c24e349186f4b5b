import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { claimWorkDir } from './work-dir-claim'

const folders: string[] = []
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

async function folder(): Promise<string> {
  const made = await mkdtemp(join(tmpdir(), 'toolport-claim-'))
  folders.push(made)
  return made
}

describe('claimWorkDir', () => {
  it('claims a free folder, and again for the same process', async () => {
    const work = join(await folder(), 'work')
    expect(await claimWorkDir(work)).toBeUndefined()
    expect(await readFile(join(work, 'owner.pid'), 'utf8')).toBe(String(process.pid))
    expect(await claimWorkDir(work)).toBeUndefined()
  })

  it('refuses a folder another live process holds, and takes over one whose process is gone', async () => {
    const work = await folder()
    const other = spawn('sleep', ['30'])
    try {
      await writeFile(join(work, 'owner.pid'), String(other.pid))
      expect(await claimWorkDir(work)).toMatch(new RegExp(`in use by another toolport process \\(pid ${other.pid}\\)`))
    } finally {
      other.kill('SIGKILL')
      await new Promise((resolve) => other.once('exit', resolve))
    }
    expect(await claimWorkDir(work)).toBeUndefined()
    expect(await readFile(join(work, 'owner.pid'), 'utf8')).toBe(String(process.pid))
  })
})
