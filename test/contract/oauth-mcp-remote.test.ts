import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signInWithKey } from '../support/oauth-client'
import { freePort } from '../support/ports'
import { startTestServer, type TestServer } from '../support/server'

// mcp-remote (the stdio-to-HTTP bridge desktop MCP clients use) against the built-in authorization
// server: it discovers the issuer, registers itself, prints the authorization URL, and waits on its own
// callback server on 127.0.0.1; the test plays the person (sign-in with a key, consent) and lets the
// redirect reach that callback. Then it speaks JSON-RPC over mcp-remote's stdio and lists the tools.
const fullKey = 'acme-remote-key-0123456789'
let server: TestServer
let publicUrl: string
let scratch: string
let proxy: ChildProcessWithoutNullStreams | undefined
let stderr = ''

beforeAll(async () => {
  const port = await freePort()
  publicUrl = `http://127.0.0.1:${port}`
  server = await startTestServer(
    {
      TOOLPORT_PUBLIC_URL: publicUrl,
      TOOLPORT_OAUTH_ISSUER: 'builtin',
      TOOLPORT_SIGNING_SECRET: 'builtin-mcp-remote-secret-0123456789abcdef',
      TOOLPORT_APPROVAL: 'none',
    },
    { port, fileKeys: [{ tenant: 'acme', key: fullKey }] },
  )
  scratch = await mkdtemp(join(tmpdir(), 'toolport-mcp-remote-'))
})

afterAll(async () => {
  if (proxy && proxy.exitCode === null) {
    const exited = new Promise((done) => proxy?.once('exit', done))
    proxy.kill('SIGTERM')
    await exited
  }
  await server?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

/** Starts mcp-remote with its state in the scratch folder and every way of opening a browser a no-op. */
async function startProxy(callbackPort: number): Promise<ChildProcessWithoutNullStreams> {
  const bin = join(scratch, 'bin')
  await mkdir(bin, { recursive: true })
  for (const opener of ['xdg-open', 'gio', 'x-www-browser', 'sensible-browser']) {
    await writeFile(join(bin, opener), '#!/bin/sh\nexit 0\n')
    await chmod(join(bin, opener), 0o755)
  }
  const child = spawn(
    process.execPath,
    [
      'node_modules/mcp-remote/dist/proxy.js',
      `${publicUrl}/mcp`,
      String(callbackPort),
      '--host',
      '127.0.0.1',
      '--allow-http',
      '--transport',
      'http-only',
      // The person here is the test itself, but on a loaded machine it may take a while.
      '--auth-timeout',
      '120',
    ],
    {
      env: {
        ...process.env,
        // Tokens and client registration go here rather than to ~/.mcp-auth.
        MCP_REMOTE_CONFIG_DIR: join(scratch, 'config'),
        HOME: scratch,
        // The `open` package's xdg-open honours $BROWSER; the PATH holds no-op openers for the fallbacks.
        BROWSER: 'true',
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        DISPLAY: '',
      },
    },
  )
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk
  })
  return child
}

/** Resolves with the first match of `pattern` in mcp-remote's stderr, as it arrives. */
function fromStderr(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(stderr)
      if (!match) return
      child.stderr.off('data', check)
      child.off('exit', exited)
      resolve(match)
    }
    const exited = (code: number | null) => reject(new Error(`mcp-remote exited (${code}):\n${stderr}`))
    child.stderr.on('data', check)
    child.once('exit', exited)
    check()
  })
}

/** A JSON-RPC peer over the child's stdio: newline-delimited messages, answers matched by id. */
function rpc(child: ChildProcessWithoutNullStreams) {
  const waiting = new Map<number, (message: Record<string, unknown>) => void>()
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as { id?: number }
    if (typeof message.id === 'number') waiting.get(message.id)?.(message)
  })
  let next = 1
  return {
    request(method: string, params: Record<string, unknown> = {}) {
      const id = next++
      const answered = new Promise<Record<string, unknown>>((resolve) => waiting.set(id, resolve))
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
      return answered
    },
    notify(method: string) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`)
    },
  }
}

describe('mcp-remote against the built-in authorization server', () => {
  it('completes its OAuth flow through its own callback and lists and calls the toolport tools', async () => {
    const callbackPort = await freePort()
    proxy = await startProxy(callbackPort)
    const [, printed] = await fromStderr(proxy, /Please authorize this client by visiting:\s*(\S+)/)
    const authorizationUrl = new URL(printed as string)
    expect(authorizationUrl.origin).toBe(publicUrl)
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${publicUrl}/mcp`)

    // The person signs in and consents; the browser's last hop is mcp-remote's callback server.
    const redirectUri = authorizationUrl.searchParams.get('redirect_uri') as string
    expect(redirectUri.startsWith(`http://127.0.0.1:${callbackPort}/`)).toBe(true)
    const { url, offered } = await signInWithKey(authorizationUrl, fullKey, redirectUri)
    expect(offered).toEqual(expect.arrayContaining(['tools:read']))
    const landed = await fetch(url)
    expect(landed.status).toBe(200)
    await landed.arrayBuffer()

    // mcp-remote exchanges the code and connects; then it serves MCP on its stdio.
    await fromStderr(proxy, /Local STDIO server running/)
    const peer = rpc(proxy)
    const initialized = await peer.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'mcp-remote-test', version: '1.0.0' },
    })
    expect(initialized).toMatchObject({ result: { serverInfo: expect.any(Object) } })
    peer.notify('notifications/initialized')
    const listed = (await peer.request('tools/list')) as { result?: { tools?: Array<{ name: string }> } }
    const names = (listed.result?.tools ?? []).map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(['read_file', 'write_file', 'list_files']))
    // A call through the bridge acts for the tenant the key signed in.
    const written = await peer.request('tools/call', {
      name: 'write_file',
      arguments: { path: 'remote.txt', content: 'via mcp-remote' },
    })
    expect(written).toMatchObject({ result: { structuredContent: { path: 'remote.txt', created: true } } })
    expect(await server.call('read_file', { path: 'remote.txt' }, { key: fullKey })).toMatchObject({
      status: 200,
      body: { content: 'via mcp-remote' },
    })
  }, 180_000)
})
