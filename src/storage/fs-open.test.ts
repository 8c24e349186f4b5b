import { closeSync, constants, readdirSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { namesOpenFiles, openVerified } from './fs-open'

const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

describe('openVerified', () => {
  let root = ''

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'toolport-fs-open-')))
    await mkdir(join(root, 'real', 'deep'), { recursive: true })
    await writeFile(join(root, 'real', 'deep', 'file.txt'), 'inside')
    await mkdir(join(root, 'elsewhere'))
    await writeFile(join(root, 'elsewhere', 'file.txt'), 'elsewhere')
    await symlink(join(root, 'elsewhere'), join(root, 'real', 'alias'))
    await symlink(join(root, 'real', 'deep', 'file.txt'), join(root, 'real', 'deep', 'link.txt'))
  })

  afterAll(() => rm(root, { recursive: true, force: true }))

  it('knows this Linux process can name its open files', async () => {
    expect(await namesOpenFiles(root)).toBe(true)
    expect(await namesOpenFiles(join(root, 'missing'))).toBe(false)
  })

  it('keeps the descriptor of a file reached without any symlink', () => {
    const path = join(root, 'real', 'deep', 'file.txt')
    const fd = openVerified(path, flags)
    expect(fd).not.toBeNull()
    try {
      expect(readFileSync(fd as number, 'utf8')).toBe('inside')
    } finally {
      closeSync(fd as number)
    }
  })

  it('proves nothing through a symlinked folder, a final symlink or a missing file, and leaks no descriptor', () => {
    const before = openDescriptors()
    expect(openVerified(join(root, 'real', 'alias', 'file.txt'), flags)).toBeNull()
    expect(openVerified(join(root, 'real', 'deep', 'link.txt'), flags)).toBeNull()
    expect(openVerified(join(root, 'real', 'deep', 'missing.txt'), flags)).toBeNull()
    expect(openVerified(join(root, 'real', 'deep', 'file.txt', 'below'), flags)).toBeNull()
    expect(openDescriptors()).toBe(before)
  })
})

function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length
}
