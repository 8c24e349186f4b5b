import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// What a command can learn of the host from /proc, attacked through execute_command on real bubblewrap.
describe('what the bwrap sandbox sees of the host', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ TOOLPORT_SANDBOX: 'bwrap' }, { shell: true })
  })
  afterAll(async () => {
    await server.stop()
  })
  const run = async (command: string) => {
    const result = await server.call('execute_command', { command })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    return result.body.stdout as string
  }

  it('finds nothing in /proc/1/environ: not even the service folder as PWD', async () => {
    expect(await run('wc -c < /proc/1/environ; tr "\\0" "\\n" < /proc/1/environ')).toBe('0\n')
  })

  it('finds no host path in /proc/1/cmdline: the options reach bwrap through a pipe', async () => {
    const cmdline = await run('tr "\\0" " " < /proc/1/cmdline')
    expect(cmdline).toMatch(/^\S*bwrap --args 3 -- \/bin\/sh -c tr /)
    expect(cmdline).not.toContain(server.dataDir)
    expect(cmdline).not.toContain(process.cwd())
  })

  it('finds in /proc/self/mountinfo no host folder but the one its workspace copy is in', async () => {
    const mounts = (await run('cat /proc/self/mountinfo'))
      .trim()
      .split('\n')
      .map((line) => ({ line, fields: line.split(' ') }))
      .map(({ line, fields }) => ({ line, root: fields[3] as string, target: fields[4] as string }))
    // The work folder (and so the service's data folder beside it) shows only as /workspace's source: the
    // bind's root, or over an overlay the layers its options name (SECURITY.md).
    expect(mounts.filter((mount) => mount.line.includes(server.dataDir)).map((mount) => mount.target)).toEqual([
      '/workspace',
    ])
    // The generated /etc files come from bwrap's own tmpfs, not from a folder of the host.
    for (const name of ['passwd', 'group', 'hosts', 'hostname'])
      expect(mounts.find((mount) => mount.target === `/etc/${name}`)?.root).toMatch(/^\/bindfile/)
    expect(mounts.some((mount) => mount.root.startsWith(process.cwd()))).toBe(false)
  })
})

// Without the overlay the chain to bwrap is shorter (no unshare and mount shell): its environment too stays empty.
describe('what the bwrap sandbox sees of the host, without the workspace overlay', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ TOOLPORT_SANDBOX: 'bwrap', TOOLPORT_SHELL_OVERLAY: 'off' }, { shell: true })
  })
  afterAll(async () => {
    await server.stop()
  })

  it('finds nothing in /proc/1/environ: not even the service folder as PWD', async () => {
    const result = await server.call('execute_command', {
      command: 'wc -c < /proc/1/environ; tr "\\0" "\\n" < /proc/1/environ',
    })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body.stdout).toBe('0\n')
  })
})
