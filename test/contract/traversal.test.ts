import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

/** Paths that must be refused with 400 before any storage access. */
const rejected = [
  '..',
  '../secret.txt',
  '../../outside-secret.txt',
  '../../../../../../../../etc/passwd',
  'a/../../secret.txt',
  'a/b/../../..',
  'a/../b',
  './../x',
  '...',
  '....',
  '....//....//etc/passwd',
  '/etc/passwd',
  '//etc/passwd',
  '/',
  '/tmp/../etc/shadow',
  '..\\..\\windows\\win.ini',
  'a\\..\\b',
  'C:\\Windows\\win.ini',
  'C:/Windows/win.ini',
  'c:secret',
  '\\\\server\\share\\x',
  'foo\u0000.txt',
  '\u0000',
  'foo\n.txt',
  'foo\r',
  'a/\u0007b',
  'tab\tname',
  'del\u007fname',
  'c1\u0085name',
  'line\u2028sep',
  '%2e%2e/secret.txt',
  '..%2fsecret.txt',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '%2E%2E/x',
  'a%5c..%5cb',
  'a%00b',
  '\u2025/secret.txt',
  '\uff0e\uff0e/secret.txt',
  'a\uff0f..\uff0fb',
  '~/.ssh/id_rsa',
  '~root/.bashrc',
  'a/'.repeat(400),
  `${'x'.repeat(256)}.txt`,
  '',
  '.',
  './',
  ' ',
  ' / ',
  // Unpaired surrogates: UTF-8 storage would turn each into U+FFFD, so distinct paths would alias.
  '\ud800',
  'notes/\udbff.txt',
  'x\udc00y.txt',
]

/** Odd but legal names: they may succeed or fail, but only ever inside the workspace. */
const contained = [
  'link/outside-secret.txt',
  'link',
  'link/new-file.txt',
  'etc-link/passwd',
  'file:///etc/passwd',
  ' ../x',
  '.. /x',
  'a/ ../b',
  '\u202e../x',
  '%c0%ae%c0%ae/x',
  '..%252f..%252fx',
  'secret.txt/..',
  '.git/config',
  'con',
  'NUL',
  'aux.txt',
  'a:b',
  'ü/日本語/🎉.txt',
  '-rf',
  '$(id)',
  '`id`',
  '*',
  'a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p.txt',
]

const calls = (path: string): Array<[string, Record<string, unknown>]> => [
  ['read_file', { path }],
  ['read_file', { path, start_line: 1, end_line: 2 }],
  ['write_file', { path, content: 'PWNED' }],
  ['write_file', { path, mode: 'replace', old_text: 'top secret', new_text: 'PWNED' }],
  ['write_file', { path, mode: 'patch', patches: [{ start_line: 1, end_line: 1, content: 'PWNED' }] }],
  ['apply_edit', { path, old_text: 'top secret', new_text: 'PWNED' }],
  ['revert_edit', { path, old_text: 'top secret', new_text: 'PWNED' }],
  ['multi_edit', { path, edits: [{ old_text: 'top secret', new_text: 'PWNED' }] }],
  ['delete_file', { path }],
  ['list_files', { path }],
  ['list_files', { path, recursive: true }],
]

async function snapshot(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const full = join(folder, entry.name)
      if (entry.isSymbolicLink()) files.set(relative(root, full), 'symlink')
      else if (entry.isDirectory()) await walk(full)
      else files.set(relative(root, full), await readFile(full, 'utf8'))
    }
  }
  await walk(root)
  return files
}

let server: TestServer
let victimFolder: string

beforeAll(async () => {
  server = await startTestServer()
  const data = join(server.dataDir, 'data')
  await writeFile(join(server.dataDir, 'outside-secret.txt'), 'top secret outside the data folder')
  await server.call(
    'write_file',
    { path: 'secret.txt', content: 'top secret of another workspace' },
    { workspace: 'other' },
  )
  await server.storage.put('tenants/eve/workspaces/victim/secret.txt', 'top secret of another tenant')
  await server.call('write_file', { path: 'own.txt', content: 'top secret but mine' }, { workspace: 'victim' })
  victimFolder = join(data, 'tenants/default/workspaces/victim')
  // A symlink planted in the workspace (as a sandboxed command could) must not be a way out.
  await symlink(server.dataDir, join(victimFolder, 'link'))
  await symlink('/etc', join(victimFolder, 'etc-link'))
  await mkdir(join(server.dataDir, 'spare'), { recursive: true })
})
afterAll(async () => {
  await server.stop()
})

describe('hostile paths', () => {
  it(`refuses ${rejected.length} traversal and malformed paths with 400 on every file tool`, async () => {
    for (const path of rejected) {
      for (const [tool, body] of calls(path)) {
        if (tool === 'list_files' && ['', '.', './'].includes(path)) continue
        const result = await server.call(tool, body, { workspace: 'victim' })
        expect(result.status, `${tool} ${JSON.stringify(path)}: ${JSON.stringify(result.body)}`).toBe(400)
        expect(result.body.code).toBe('validation')
        expect(result.body.hint.length).toBeGreaterThan(20)
        expect(result.headers.get('content-type')).toBe('application/problem+json')
      }
    }
  })

  it(`keeps ${contained.length} odd but legal paths inside the workspace, never a 5xx`, async () => {
    const before = await snapshot(server.dataDir)
    for (const path of contained) {
      for (const [tool, body] of calls(path)) {
        const result = await server.call(tool, body, { workspace: 'victim' })
        expect(result.status, `${tool} ${JSON.stringify(path)}: ${JSON.stringify(result.body)}`).toBeLessThan(500)
        expect(JSON.stringify(result.body)).not.toMatch(/top secret (outside|of another)|root:x:0:0/)
      }
    }
    const after = await snapshot(server.dataDir)
    const workspacePrefix = relative(server.dataDir, victimFolder)
    for (const [file, content] of before) {
      if (!file.startsWith(`${workspacePrefix}/`)) expect(after.get(file), file).toBe(content)
    }
    for (const file of after.keys()) {
      if (!before.has(file)) expect(file.startsWith(`${workspacePrefix}/`), `new file outside: ${file}`).toBe(true)
    }
  })

  it('never follows a planted symlink out of the workspace', async () => {
    const read = await server.call('read_file', { path: 'link/outside-secret.txt' }, { workspace: 'victim' })
    expect(read.status).toBeGreaterThanOrEqual(400)
    expect(read.status).toBeLessThan(500)
    const etc = await server.call('read_file', { path: 'etc-link/hostname' }, { workspace: 'victim' })
    expect(etc.status).toBeGreaterThanOrEqual(400)
    const write = await server.call(
      'write_file',
      { path: 'link/spare/planted.txt', content: 'x' },
      { workspace: 'victim' },
    )
    expect(write.status).toBeGreaterThanOrEqual(400)
    await expect(stat(join(server.dataDir, 'spare/planted.txt'))).rejects.toThrow()
    expect(await readFile(join(server.dataDir, 'outside-secret.txt'), 'utf8')).toBe(
      'top secret outside the data folder',
    )
  })

  it('leaves the other workspace and tenant untouched', async () => {
    const other = await server.call('read_file', { path: 'secret.txt' }, { workspace: 'other' })
    expect(other.body.content).toBe('top secret of another workspace')
    const eve = await server.storage.get('tenants/eve/workspaces/victim/secret.txt')
    expect(new TextDecoder().decode(eve?.body)).toBe('top secret of another tenant')
  })
})
