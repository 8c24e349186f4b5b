import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { watchListening } from '../support/listening'
import { newParent, startOtlpReceiver } from '../support/otlp-receiver'

const root = new URL('../..', import.meta.url).pathname
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

/** Sends raw bytes and collects everything the server writes back until it closes the connection. */
function rawExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request))
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
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
    // Requests Node itself refuses before the app sees them still get a problem document.
    const oversized = await rawExchange(url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(oversized).toMatch(/^HTTP\/1\.1 431 /)
    expect(oversized).toContain('Content-Type: application/problem+json')
    expect(JSON.parse(oversized.slice(oversized.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 431,
      code: 'size_exceeded',
    })
    const garbled = await rawExchange(url, 'NOT HTTP AT ALL\r\n\r\n')
    expect(garbled).toMatch(/^HTTP\/1\.1 400 /)
    expect(JSON.parse(garbled.slice(garbled.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'validation' })
    service.child.kill('SIGTERM')
    expect(await exitCode(service.child)).toBe(0)
  })

  it('checks the command policy in its worker (dist/policy-worker.js)', async () => {
    // The sandbox user must be able to traverse the work folder (mkdtemp makes it 0700).
    const work = await mkdtemp(join(tmpdir(), 'toolport-start-work-'))
    await chmod(work, 0o711)
    const service = startService({ TOOLPORT_SHELL_DENY: 'rm', TOOLPORT_WORK_DIR: work })
    const url = await service.url
    const run = (command: string) =>
      fetch(`${url}/v1/tools/execute_command`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command }),
      }).then(async (response) => ({ status: response.status, body: await response.json() }))
    const denied = await run("sh -c 'rm -rf notes'")
    expect(denied.status, JSON.stringify(denied.body)).toBe(403)
    expect(denied.body).toMatchObject({ code: 'permission_denied' })
    const hostile = await run('a b; '.repeat(12_000))
    expect(hostile.status, JSON.stringify(hostile.body)).toBe(413)
    expect(hostile.body.code).toBe('size_exceeded')
    // Allowed commands get past the policy to the sandbox: 200 where bwrap runs, 503 where none is installed.
    expect([200, 503]).toContain((await run('echo ok')).status)
    service.child.kill('SIGTERM')
    expect(await exitCode(service.child)).toBe(0)
    await rm(work, { recursive: true, force: true })
  })

  it('does heavy tool work in its worker (dist/offload-worker.js)', async () => {
    const service = startService({})
    const url = await service.url
    const response = await fetch(`${url}/v1/tools/pdf_generation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'hello from the worker', content_type: 'text' }),
    })
    const body = await response.json()
    expect(response.status, JSON.stringify(body)).toBe(200)
    expect(body).toMatchObject({ pages: 1, renderer: 'pdf-lib' })
    expect(service.output()).not.toMatch(/offload worker/)
    service.child.kill('SIGTERM')
    expect(await exitCode(service.child)).toBe(0)
  })

  it('exports traces from its worker (dist/otel-export-worker.js) and sends what is still buffered on SIGTERM', async () => {
    const receiver = await startOtlpReceiver()
    try {
      // The batch delay is far beyond the test: only the shutdown's flush can deliver these spans.
      const service = startService({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '600000',
      })
      const url = await service.url
      const parent = newParent()
      for (let index = 0; index < 3; index++) {
        const response = await fetch(`${url}/v1/tools/write_file`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', traceparent: parent.traceparent },
          body: JSON.stringify({ path: `traced-${index}.txt`, content: 'hi' }),
        })
        expect(response.status).toBe(200)
      }
      expect(receiver.spans.filter((span) => span.traceId === parent.traceId)).toEqual([])
      service.child.kill('SIGTERM')
      expect(await exitCode(service.child)).toBe(0)
      const calls = receiver.spans.filter(
        (span) => span.traceId === parent.traceId && span.name === 'execute_tool write_file',
      )
      expect(calls).toHaveLength(3)
      expect(service.output()).not.toMatch(/export worker/)
    } finally {
      await receiver.close()
    }
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
