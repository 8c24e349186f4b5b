import { execFileSync } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureTestImage, leftoverContainers } from './container-image'
import { containerStopContract } from './container-stop'
import { startTestServer, type TestServer } from './server'

/**
 * The sandbox contract and its hostile-command corpus, run against each executor (bwrap, container):
 * every command below is treated as hostile, with real isolation and real limits.
 */
export interface ShellContract {
  /** Environment selecting and configuring the executor (e.g. TOOLPORT_SANDBOX=container). */
  env: Record<string, string>
  /** uid `id -u` prints inside the sandbox. */
  sandboxUid: number
  /** Variables the executor or its shell add besides toolport's own (HOSTNAME from an engine, SHLVL). */
  extraEnvNames?: string[]
  /**
   * Which limit kills the executor names in limit_exceeded. Default: what /readyz shows (bwrap names
   * both where it has cgroups, neither on rlimits alone).
   */
  reports?: { memory: boolean; processes: boolean }
  /** Runs before the first server starts (e.g. building an image). */
  prepare?: () => Promise<void>
  /** What the executor's engine knows, added to the message of a failed clean-up check. */
  diagnose?: () => string
  /** What the executor left behind that should be gone after every call (e.g. containers). */
  leftovers?: () => Promise<string[]>
}

export function shellContract(contract: ShellContract): void {
  // A function: prepare() may still complete contract.env (e.g. with the image it built).
  const limits = () => ({
    ...contract.env,
    TOOLPORT_SHELL_MEMORY_BYTES: String(128 * 1024 * 1024),
    TOOLPORT_SHELL_PIDS: '64',
    TOOLPORT_SHELL_FILE_BYTES: String(30 * 1024 * 1024),
    TOOLPORT_SHELL_WORKSPACE_BYTES: String(60 * 1024 * 1024),
    TOOLPORT_SHELL_CONCURRENCY: '2',
    TOOLPORT_SHELL_QUEUE: '4',
  })

  let server: TestServer
  let reports = { memory: false, processes: false }
  const secret = `toolport-secret-${Date.now()}`

  beforeAll(async () => {
    await contract.prepare?.()
    process.env.TOOLPORT_TEST_SECRET = secret
    server = await startTestServer({ ...limits(), TOOLPORT_API_KEYS: `acme=${secret}-key` }, { shell: true })
    const ready = await fetch(`${server.url}/readyz`).then((response) => response.json())
    const cgroups = String(ready.checks.sandbox.enforced.memory).startsWith('cgroup')
    reports = contract.reports ?? { memory: cgroups, processes: cgroups }
  })
  afterAll(async () => {
    await server.stop()
    delete process.env.TOOLPORT_TEST_SECRET
  })

  const key = () => `${secret}-key`
  // Suites of this contract run side by side (bwrap, podman, docker) and look for their sleeps among all
  // host processes: each run's durations must be its own, or one suite sees the other's processes.
  const runToken = String(100_000 + Math.floor(Math.random() * 900_000))
  function run(command: string, extra: Record<string, unknown> = {}, workspace = 'shell') {
    return server.call('execute_command', { command, ...extra }, { key: key(), workspace })
  }

  function hostProcesses(marker: string): string[] {
    const listing = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    return listing.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'))
  }

  describe('execute_command basics', () => {
    it('runs a command in /workspace and reports exit code, streams and duration', async () => {
      const result = await run('echo out; echo err >&2; pwd; exit 3')
      expect(result.status, JSON.stringify(result.body)).toBe(200)
      expect(result.body).toMatchObject({ exit_code: 3, timed_out: false, truncated: false })
      expect(result.body.stdout).toBe('out\n/workspace\n')
      expect(result.body.stderr).toBe('err\n')
      // Two pipes: the order between them is the order the service read them in.
      expect(result.body.output.split('\n').sort()).toEqual(['', '/workspace', 'err', 'out'])
      expect(typeof result.body.duration_ms).toBe('number')
    })

    it('runs in working_directory and refuses one that does not exist or escapes', async () => {
      await server.call('write_file', { path: 'sub/dir/a.txt', content: 'x' }, { key: key(), workspace: 'shell' })
      expect((await run('pwd', { working_directory: 'sub/dir' })).body.stdout).toBe('/workspace/sub/dir\n')
      expect((await run('pwd', { working_directory: 'nope' })).body).toMatchObject({
        status: 400,
        field: 'working_directory',
      })
      expect((await run('pwd', { working_directory: '../..' })).status).toBe(400)
      expect((await run('pwd', { working_directory: 'sub/dir/a.txt' })).status).toBe(400)
    })

    it('refuses malformed commands with 400, never a 500', async () => {
      const attempts: Array<[Record<string, unknown>, string]> = [
        [{ command: 'echo a\u0000b' }, 'command'],
        [{ command: '' }, 'command'],
        [{ command: 'x'.repeat(65_537) }, 'command'],
        [{ command: ['ls'] }, 'command'],
        [{ command: 'ls', timeout_seconds: 1.5 }, 'timeout_seconds'],
        [{ command: 'ls', timeout_seconds: '30' }, 'timeout_seconds'],
        [{ command: 'ls', working_directory: 'a\u0000b' }, 'working_directory'],
        [{ command: 'ls', working_directory: '/etc' }, 'working_directory'],
      ]
      for (const [body, field] of attempts) {
        const result = await server.call('execute_command', body, { key: key(), workspace: 'shell' })
        expect(result.status, JSON.stringify(body).slice(0, 80)).toBe(400)
        expect(result.body.field).toBe(field)
      }
    })

    it('validates timeout_seconds between 1 and 3600', async () => {
      expect((await run('true', { timeout_seconds: 0 })).body.field).toBe('timeout_seconds')
      expect((await run('true', { timeout_seconds: 3601 })).body.field).toBe('timeout_seconds')
    })
  })

  describe('isolation: what a hostile command cannot see or reach', () => {
    it('cannot read host secrets, the data folder or the service source', async () => {
      const source = process.cwd()
      const result = await run(
        `cat /etc/shadow; ls ${server.dataDir}; ls ${source}/src; ls /root; cat /etc/passwd; ls /; id -u; cat /proc/self/status | grep CapEff`,
      )
      expect(result.body.stdout).not.toContain('root:$')
      expect(result.body.stdout).not.toContain('app.ts')
      expect(result.body.stderr).toContain('/etc/shadow')
      expect(result.body.stdout).toContain('sandbox:x:1000')
      expect(result.body.stdout).not.toMatch(/^(?!root|sandbox|nobody).+:x:\d+/m)
      expect(result.body.stdout).toContain('CapEff:\t0000000000000000')
      expect(result.body.stdout).toMatch(new RegExp(`^${contract.sandboxUid}$`, 'm'))
    })

    it('sees none of the service environment, also through /proc/1/environ', async () => {
      const result = await run(
        'env; echo ---; cat /proc/1/environ | tr "\\0" "\\n"; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"',
      )
      expect(result.body.output).not.toContain(secret)
      expect(result.body.output).not.toContain('TOOLPORT_')
      const names = result.body.stdout
        .split('---')[0]
        .trim()
        .split('\n')
        .map((line: string) => line.split('=')[0])
        .sort()
      const allowed = ['HOME', 'LANG', 'OLDPWD', 'PATH', 'PWD', 'TMPDIR', 'USER', ...(contract.extraEnvNames ?? [])]
      expect(names).toEqual(allowed.filter((name) => names.includes(name)).sort())
      expect(names).not.toContain('AWS_SECRET_ACCESS_KEY')
    })

    it('has no network: a server on the host loopback is unreachable', async () => {
      let hits = 0
      const local: Server = createServer((_request, response) => {
        hits++
        response.end('reached')
      })
      await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve))
      const port = (local.address() as AddressInfo).port
      try {
        const script = `require('http').get('http://127.0.0.1:${port}/',r=>{console.log('REACHED')}).on('error',e=>console.log('ERR',e.code))`
        const result = await run(
          `node -e "${script}"; cat /sys/class/net/*/address 2>/dev/null; ls /sys/class/net 2>&1`,
        )
        expect(result.body.stdout).toContain('ERR ECONNREFUSED')
        expect(result.body.stdout).not.toContain('REACHED')
        expect(hits).toBe(0)
      } finally {
        local.close()
      }
    })

    it('cannot see host processes', async () => {
      const result = await run('ls /proc | grep -E "^[0-9]+$" | wc -l')
      expect(Number(result.body.stdout.trim())).toBeLessThan(6)
    })
  })

  describe('containment: the service keeps serving', () => {
    it('contains a fork bomb', async () => {
      const bomb = run('bomb() { bomb | bomb & }; bomb; sleep 2; echo survived', { timeout_seconds: 10 })
      const meanwhile = await server.call('list_files', {}, { key: key(), workspace: 'shell' })
      expect(meanwhile.status).toBe(200)
      const result = await bomb
      expect(result.status).toBe(200)
      expect(result.body.output).toMatch(/fork|Resource temporarily unavailable|survived/i)
      if (reports.processes) expect(result.body.limit_exceeded).toBe('processes')
      expect((await run('echo after')).body.stdout).toBe('after\n')
    })

    it('kills a memory hog', async () => {
      const result = await run('node -e "const a=[]; for(;;) a.push(Buffer.alloc(1<<24, 1))"', { timeout_seconds: 20 })
      expect(result.status).toBe(200)
      expect(result.body.exit_code).not.toBe(0)
      expect(result.body.exit_code).not.toBe(127)
      if (reports.memory) expect(result.body).toMatchObject({ limit_exceeded: 'memory', exit_code: 137 })
      expect((await run('echo ok')).body.stdout).toBe('ok\n')
    })

    it('stops a disk filler at the file size limit and the workspace size limit', async () => {
      const oneFile = await run('head -c 100000000 /dev/zero > big.bin; echo "exit=$?"')
      // 153 = 128 + SIGXFSZ: RLIMIT_FSIZE stopped the write.
      expect(oneFile.body.stdout).toBe('exit=153\n')
      const manyFiles = await run(
        'for i in 1 2 3 4 5 6; do head -c 25000000 /dev/zero > part$i.bin; done; sleep 5; echo finished',
        {
          timeout_seconds: 20,
        },
      )
      expect(manyFiles.body.limit_exceeded).toBe('workspace size')
      expect(manyFiles.body.stdout).not.toContain('finished')
      // A workspace left past a limit keeps none of the run's changes, and its copy is back to storage's.
      expect(manyFiles.body.files_changed).toEqual([])
      expect(manyFiles.body.hint).toMatch(/Nothing was saved back/)
      expect((await server.call('read_file', { path: 'part1.bin' }, { key: key(), workspace: 'shell' })).status).toBe(
        404,
      )
      expect((await run('ls part*.bin 2>&1')).body.stdout).toMatch(/No such file/)
      await run('rm -f big.bin')
    })

    it('caps an output flood and keeps the response under 100,000 characters', async () => {
      const response = await fetch(`${server.url}/v1/tools/execute_command?workspace=shell`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key()}` },
        body: JSON.stringify({ command: 'yes "flood \\" \\\\ line" | head -c 30000000; echo done >&2' }),
      })
      const text = await response.text()
      expect(text.length).toBeLessThanOrEqual(100_000)
      const body = JSON.parse(text)
      expect(body.truncated).toBe(true)
      expect(body.stdout.startsWith('flood')).toBe(true)
      expect(body.stderr).toBe('done\n')
      expect(body.exit_code).toBe(0)
    })
  })

  describe('timeouts and disconnects kill every process', () => {
    it('a timeout returns what was produced so far and leaves no descendant alive', async () => {
      const marker = `987.${runToken}`
      const result = await run(
        `echo before; (trap "" TERM; sleep ${marker}) & sh -c 'trap "" TERM; sleep ${marker}' & sleep ${marker}`,
        {
          // Long enough for "before" to appear even when a busy machine is slow to start the sandbox
          // (a container start under two suites' load took over 3 s).
          timeout_seconds: 8,
        },
      )
      expect(result.body).toMatchObject({ timed_out: true, exit_code: null, stdout: 'before\n' })
      expect(result.body.hint).toMatch(/timeout_seconds/)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(hostProcesses(`sleep ${marker}`)).toEqual([])
    })

    it('a client that disconnects takes its command down', async () => {
      const marker = `876.${runToken}`
      const controller = new AbortController()
      const pending = fetch(`${server.url}/v1/tools/execute_command?workspace=shell`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key()}` },
        body: JSON.stringify({ command: `sleep ${marker} & sleep ${marker}`, timeout_seconds: 600 }),
        signal: controller.signal,
      }).catch(() => undefined)
      await new Promise((resolve) => setTimeout(resolve, 700))
      expect(hostProcesses(`sleep ${marker}`).length).toBeGreaterThan(0)
      controller.abort()
      await pending
      // Nobody waits for a disconnected call's clean-up, so give it time: on a loaded CI machine a
      // container engine's kill and removal has taken more than 3 s. This bounds liveness, not speed.
      const started = Date.now()
      while (Date.now() - started < 20_000 && hostProcesses(`sleep ${marker}`).length > 0) {
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(hostProcesses(`sleep ${marker}`), `still running ${Date.now() - started} ms after the disconnect`).toEqual(
        [],
      )
    }, 45_000)

    it('a client that disconnects while its sandbox is still starting leaves nothing behind', async () => {
      // Disconnects land at different points of the start: before the sandbox runs, while an engine is
      // creating the container, right after it started.
      const markers: string[] = []
      for (const [index, delayMs] of [0, 40, 80, 150, 250, 400].entries()) {
        const marker = `765.${runToken}${index}`
        markers.push(marker)
        const controller = new AbortController()
        const pending = fetch(`${server.url}/v1/tools/execute_command?workspace=shell`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key()}` },
          body: JSON.stringify({ command: `sleep ${marker}`, timeout_seconds: 600 }),
          signal: controller.signal,
        }).catch(() => undefined)
        await new Promise((resolve) => setTimeout(resolve, delayMs))
        controller.abort()
        await pending
      }
      const running = () => markers.flatMap((marker) => hostProcesses(`sleep ${marker}`))
      const started = Date.now()
      let left: string[] = []
      while (Date.now() - started < 20_000) {
        left = [...running(), ...((await contract.leftovers?.()) ?? [])]
        if (left.length === 0) break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(left, `left ${Date.now() - started} ms after the disconnects`).toEqual([])
    }, 45_000)
  })

  describe('symlinks never leak host files', () => {
    it('ln -s to host files is neither synced back nor readable', async () => {
      const result = await run(
        'ln -s /etc/passwd passwd-link; ln -s / root-link; ln -s ../../../../etc up-link; echo data > real.txt',
      )
      expect(result.body.files_changed.map((change: { path: string }) => change.path)).toEqual(['real.txt'])
      const skipped = result.body.skipped_files.map((entry: { path: string }) => entry.path).sort()
      expect(skipped).toEqual(['passwd-link', 'root-link', 'up-link'])
      for (const path of ['passwd-link', 'root-link/etc/passwd', 'up-link/passwd']) {
        const read = await server.call('read_file', { path }, { key: key(), workspace: 'shell' })
        expect(read.status, path).toBe(404)
      }
      const next = await run('ls -la; cat passwd-link 2>&1 || true')
      expect(next.body.stdout).not.toContain('passwd-link ->')
    })
  })

  describe('policy, concurrency and streaming', () => {
    it('answers 429 with Retry-After past the queue, and serves again once free', async () => {
      const busy = await startTestServer(
        { ...limits(), TOOLPORT_SHELL_CONCURRENCY: '1', TOOLPORT_SHELL_QUEUE: '0' },
        { shell: true },
      )
      try {
        const first = busy.call('execute_command', { command: 'sleep 1.5; echo first' })
        await new Promise((resolve) => setTimeout(resolve, 500))
        const second = await busy.call('execute_command', { command: 'echo second' })
        expect(second.status).toBe(429)
        expect(second.body.code).toBe('rate_limited')
        expect(second.headers.get('retry-after')).toBe('2')
        expect((await first).body.stdout).toBe('first\n')
        expect((await busy.call('execute_command', { command: 'echo third' })).body.stdout).toBe('third\n')
      } finally {
        await busy.stop()
      }
    })

    it('refuses denied programs anywhere in the line with 403 and a hint', async () => {
      const guarded = await startTestServer({ ...limits(), TOOLPORT_SHELL_DENY: 'rm,curl' }, { shell: true })
      try {
        for (const command of ['rm -rf x', 'ls; rm x', 'echo $(rm x)', 'ls | xargs rm', "sh -c 'curl x'"]) {
          const result = await guarded.call('execute_command', { command })
          expect(result.status, command).toBe(403)
          expect(result.body.code).toBe('permission_denied')
          expect(result.body.hint).toMatch(/rm|curl/)
        }
        expect((await guarded.call('execute_command', { command: 'echo rm' })).status).toBe(200)
      } finally {
        await guarded.stop()
      }
    })

    it('streams call, output and result events with Accept: text/event-stream', async () => {
      const response = await fetch(`${server.url}/v1/tools/execute_command?workspace=shell`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key()}` },
        body: JSON.stringify({ command: 'echo one; sleep 0.3; echo two >&2' }),
      })
      expect(response.headers.get('content-type')).toContain('text/event-stream')
      const events = (await response.text())
        .trim()
        .split('\n\n')
        .map((block) => ({
          event: /^event: (.*)$/m.exec(block)?.[1],
          data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null'),
        }))
      expect(events[0]).toMatchObject({ event: 'call', data: { tool: 'execute_command' } })
      const outputs = events.filter((event) => event.event === 'output').map((event) => event.data)
      expect(outputs).toEqual([
        { type: 'output', stream: 'stdout', text: 'one\n' },
        { type: 'output', stream: 'stderr', text: 'two\n' },
      ])
      expect(events.at(-1)).toMatchObject({ event: 'result', data: { exit_code: 0, stdout: 'one\n' } })
    })

    it('streams an error event when the call fails after validation', async () => {
      const response = await fetch(`${server.url}/v1/tools/execute_command?workspace=shell`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key()}` },
        body: JSON.stringify({ command: 'true', working_directory: 'missing' }),
      })
      const text = await response.text()
      expect(text).toContain('event: error')
      expect(text).toContain('"code":"validation"')
    })
  })
}

/**
 * The contract on the container executor with `engine` and the suite's own image. Returns the
 * environment that selects it (the image is filled in before the first server starts).
 */
export function containerContract(
  engine: 'podman' | 'docker',
  reports: { memory: boolean; processes: boolean },
): Record<string, string> {
  const env: Record<string, string> = { TOOLPORT_SANDBOX: 'container', TOOLPORT_CONTAINER_ENGINE: engine }
  shellContract({
    env,
    // As root the container runs as TOOLPORT_SANDBOX_UID (nobody by default), the workspace copy's owner.
    sandboxUid: process.getuid?.() === 0 ? 65534 : (process.getuid?.() ?? 0),
    // The engine names the container's host (HOSTNAME); busybox sh counts SHLVL.
    extraEnvNames: ['HOSTNAME', 'SHLVL'],
    reports,
    prepare: async () => {
      env.TOOLPORT_CONTAINER_IMAGE = await ensureTestImage(engine)
    },
    leftovers: () => leftoverContainers(engine),
    diagnose: () => {
      try {
        return execFileSync(engine, ['ps', '--all', '--filter', 'name=toolport-'], {
          encoding: 'utf8',
          timeout: 20_000,
        })
      } catch (error) {
        return `${engine} ps failed: ${(error as Error).message}`
      }
    },
  })
  containerStopContract(engine)
  return env
}
