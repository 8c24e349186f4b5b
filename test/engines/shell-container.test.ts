import { execFile } from 'node:child_process'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/config'
import { type ContainerOptions, containerArguments } from '../../src/sandbox/executors/container'
import { toolNames } from '../../src/tools/builtins'
import { ensureTestImage, leftoverContainers } from '../support/container-image'
import { startTestServer, type TestServer } from '../support/server'
import { containerContract } from '../support/shell-contract'

const exec = promisify(execFile)

// Real podman with the runc runtime (.ci/run installs and configures it), one container per command.
// podman's monitor marks OOM kills; a fork refused at --pids-limit leaves no trace the engine reports.
const env = containerContract('podman', { memory: true, processes: false })
const altImage = 'localhost/toolport-sandbox-alt:contract'

describe('container executor specifics', () => {
  let server: TestServer
  let image: string
  beforeAll(async () => {
    image = await ensureTestImage('podman')
    await exec('podman', ['tag', image, altImage])
    server = await startTestServer(
      { ...env, TOOLPORT_CONTAINER_IMAGE: image, TOOLPORT_CONTAINER_IMAGES: `${altImage}, localhost/never-built:1` },
      { shell: true },
    )
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('says in /readyz what each run gets', async () => {
    const ready = await fetch(`${server.url}/readyz`).then((response) => response.json())
    expect(ready.checks.sandbox).toMatchObject({ executor: 'container', status: 'ok' })
    expect(ready.checks.sandbox.enforced).toMatchObject({
      network: 'none (--network none)',
      memory: expect.stringContaining('--memory'),
      processes: expect.stringContaining('--pids-limit'),
    })
  })

  it('gives a read-only root, a writable private /tmp, no network device but lo, and no capabilities', async () => {
    const result = await server.call('execute_command', {
      command:
        'touch /usr/x 2>&1; touch /etc/x 2>&1; echo t > /tmp/t && cat /tmp/t; ls /sys/class/net; grep CapBnd /proc/self/status; grep NoNewPrivs /proc/self/status',
    })
    expect(result.status).toBe(200)
    expect(result.body.stdout).toMatch(/touch: \/usr\/x: Read-only file system/)
    expect(result.body.stdout).toMatch(/touch: \/etc\/x: Read-only file system/)
    expect(result.body.stdout).toContain('t\nlo\n')
    expect(result.body.stdout).toContain('CapBnd:\t0000000000000000')
    expect(result.body.stdout).toMatch(/NoNewPrivs:\t1/)
  })

  it('runs a call in an allowed image of its choice and refuses the others', async () => {
    const chosen = await server.call('execute_command', { command: 'echo from-alt', image: altImage })
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200)
    expect(chosen.body.stdout).toBe('from-alt\n')

    const refused = await server.call('execute_command', { command: 'id', image: 'docker.io/library/alpine:3' })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ code: 'validation', field: 'image' })
    expect(refused.body.hint).toContain(altImage)

    // Allowed, but the operator never built it: the engine's refusal, never a pull.
    const missing = await server.call('execute_command', { command: 'true', image: 'localhost/never-built:1' })
    expect(missing.status).toBe(200)
    expect(missing.body.exit_code).not.toBe(0)
    expect(missing.body.stderr).toMatch(/never-built/)
  })

  it('refuses image values that are not references, so none can become an engine option', async () => {
    const hostile = [
      '--privileged',
      '-v/:/host',
      `${'a'.repeat(300)}`,
      'alpine;id',
      'alpine $(id)',
      '../../etc/passwd',
      'alpine\nlatest',
      ' alpine',
      'ALPINE',
      'alpine:',
      '',
    ]
    for (const value of hostile) {
      const result = await server.call('execute_command', { command: 'true', image: value })
      expect(result.status, value).toBe(400)
      expect(result.body.field, value).toBe('image')
    }
    expect(await leftoverContainers('podman')).toEqual([])
  })

  it('leaves no container behind after timeouts and disconnects', async () => {
    const timedOut = await server.call('execute_command', { command: 'sleep 30', timeout_seconds: 1 })
    expect(timedOut.body.timed_out).toBe(true)
    const controller = new AbortController()
    const pending = fetch(`${server.url}/v1/tools/execute_command`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'sleep 30' }),
      signal: controller.signal,
    }).catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    controller.abort()
    await pending
    for (let attempt = 0; attempt < 50 && (await leftoverContainers('podman')).length > 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await leftoverContainers('podman')).toEqual([])
  })

  it("reports an OOM kill and keeps the engine's marker file out of the service's folder", async () => {
    const marker = join(process.cwd(), 'oom')
    const before = await stat(marker).catch(() => undefined)
    const hog = await server.call('execute_command', {
      command: 'node -e "const a=[]; for(;;) a.push(Buffer.alloc(1<<24, 1))"',
      timeout_seconds: 20,
    })
    expect(hog.body).toMatchObject({ limit_exceeded: 'memory', exit_code: 137 })
    const after = await stat(marker).catch(() => undefined)
    expect(after?.mtimeMs).toBe(before?.mtimeMs)
  })

  it('reports an image the engine lacks instead of starting without a sandbox', async () => {
    await expect(
      startTestServer({ ...env, TOOLPORT_CONTAINER_IMAGE: 'localhost/toolport-absent:1' }, { shell: true }),
    ).rejects.toThrow(/image localhost\/toolport-absent:1 is not available to podman.*podman pull/)
  })
})

describe('container configuration', () => {
  const load = (values: Record<string, string>) =>
    loadConfig({ TOOLPORT_SANDBOX: 'container', ...values }, { toolNames })

  it('needs an image and accepts only image references', () => {
    expect(() => load({})).toThrow(/TOOLPORT_CONTAINER_IMAGE/)
    expect(() => load({ TOOLPORT_CONTAINER_IMAGE: '--privileged' })).toThrow(/TOOLPORT_CONTAINER_IMAGE/)
    expect(() => load({ TOOLPORT_CONTAINER_IMAGE: 'python:3.12', TOOLPORT_CONTAINER_IMAGES: 'ok:1, -v' })).toThrow(
      /TOOLPORT_CONTAINER_IMAGES: not an image reference: -v/,
    )
    expect(() => load({ TOOLPORT_CONTAINER_IMAGE: 'python:3.12', TOOLPORT_CONTAINER_ENGINE: 'lxc' })).toThrow(
      /TOOLPORT_CONTAINER_ENGINE/,
    )
    const config = load({
      TOOLPORT_CONTAINER_IMAGE: 'registry.example.com:5000/team/python:3.12',
      TOOLPORT_CONTAINER_IMAGES: 'python:3.12-slim,registry.example.com:5000/team/python:3.12',
    })
    expect(config.sandbox.container).toEqual({
      engine: 'podman',
      image: 'registry.example.com:5000/team/python:3.12',
      images: ['registry.example.com:5000/team/python:3.12', 'python:3.12-slim'],
      cpus: 1,
      network: 'none',
    })
  })

  // docker is not runnable on this machine (no engine): its command line is checked for the same guarantees.
  it('gives docker the same guarantees without podman-only options', () => {
    const options: ContainerOptions = {
      engine: 'docker',
      enginePath: '/usr/bin/docker',
      image: 'python:3.12',
      images: ['python:3.12'],
      cpus: 2,
      network: 'none',
      limits: {
        memoryBytes: 1 << 28,
        pids: 64,
        fileBytes: 1 << 20,
        openFiles: 256,
        maxOutputBytes: 1 << 16,
        workspaceBytes: 1 << 30,
        workspaceEntries: 1000,
      },
      user: { uid: 65534, gid: 65534 },
      rootless: true,
      engineEnv: {},
      scratchDir: '/tmp',
      forwarder: undefined,
    }
    const args = containerArguments(
      options,
      { command: 'echo hi', workspaceDir: '/work/ws', cwd: 'src', timeoutMs: 1000, signal: AbortSignal.timeout(1000) },
      'toolport-x',
    )
    const pairs = args.slice(0, -5).join(' ')
    for (const expected of [
      'run --rm --name toolport-x',
      '--pull never',
      '--network none',
      '--read-only',
      '--cap-drop all',
      '--security-opt no-new-privileges',
      '--user 65534:65534',
      '--memory 268435456 --memory-swap 268435456',
      '--pids-limit 64',
      '--cpus 2',
      '--mount type=bind,source=/work/ws,target=/workspace',
      '--workdir /workspace/src',
    ])
      expect(pairs).toContain(expected)
    expect(args).not.toContain('--no-hosts')
    expect(args).not.toContain('--userns')
    expect(args).not.toContain('--privileged')
    expect(args.slice(-5)).toEqual(['--entrypoint', '/bin/sh', 'python:3.12', '-c', 'echo hi'])
  })
})
