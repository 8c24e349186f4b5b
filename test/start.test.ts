import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { watchListening } from './support/listening'

const root = new URL('..', import.meta.url).pathname
let dataDir: string

function startService(env: Record<string, string>): {
  child: ChildProcess
  url: Promise<string>
  output: () => string
} {
  const child = spawn(process.execPath, ['dist/node.js'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', TOOLPORT_DATA_DIR: dataDir, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return { child, ...watchListening(child) }
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', (code) => resolve(code))
  })
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'toolport-start-'))
  await promisify(execFile)(process.execPath, ['scripts/build.mjs'], { cwd: root })
})
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

describe('the built Node service (what npm start runs)', () => {
  it('serves tools, docs with local assets and health on loopback, and exits 0 on SIGTERM', async () => {
    const service = startService({})
    const url = await service.url
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(service.output()).toContain('authentication is off')
    expect(await fetch(`${url}/healthz`).then((r) => r.json())).toEqual({ status: 'ok' })
    const written = await fetch(`${url}/v1/tools/write_file`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'hello.txt', content: 'hi' }),
    })
    expect(written.status).toBe(200)
    const asset = await fetch(`${url}/docs/assets/swagger-ui-bundle.js`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('content-type')).toContain('javascript')
    expect((await asset.text()).length).toBeGreaterThan(100_000)
    expect((await fetch(`${url}/docs/assets/swagger-ui.css`)).status).toBe(200)
    expect((await fetch(`${url}/docs/assets/package.json`)).status).toBe(404)
    service.child.kill('SIGTERM')
    expect(await exitCode(service.child)).toBe(0)
  })

  it('refuses to start on a public address without keys, with a clear message', async () => {
    const service = startService({ HOST: '0.0.0.0' })
    await expect(service.url).rejects.toThrow(/loopback/)
    expect(await exitCode(service.child)).toBe(1)
  })

  it('refuses to start with an unknown tool in TOOLPORT_TOOLS', async () => {
    const service = startService({ TOOLPORT_TOOLS: 'read_file,launch_missiles' })
    await expect(service.url).rejects.toThrow(/unknown tool launch_missiles/)
    expect(await exitCode(service.child)).toBe(1)
  })
})
