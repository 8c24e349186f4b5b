import { afterAll, describe, expect, it } from 'vitest'
import { createWorkerLister } from './command-lister'
import { commandNames } from './command-names'
import { checkCommand } from './policy'
import { ShellTooComplexError } from './shell-syntax'

// The worker entry as source, loaded through tsx as `npm run dev` does; the built one is covered by
// test/runtimes/start.test.ts.
const policyWorker = { url: new URL('./policy-worker.ts', import.meta.url), typescript: true }
// 60 KB of simple commands: ~1-2 s of parse and walk before the node budget refuses it.
const hostile = 'a b; '.repeat(12_000)

describe('the command policy in a worker thread', () => {
  const lister = createWorkerLister(policyWorker)
  afterAll(() => lister.close())

  it('finds the same programs as commandNames on this thread', async () => {
    for (const command of [
      'ls -la | grep x && cat y',
      "sh -c 'rm -rf /tmp/x'",
      'echo $(date)',
      'FOO=1 env nice rm x',
    ]) {
      expect(await lister(command)).toEqual(await commandNames(command))
    }
  })

  it('refuses a hostile command as too complex while the main thread keeps running', async () => {
    await lister('true')
    const events: string[] = []
    // 50 ms lands inside the parse (~1-2 s), after the turn that loading the parser yields: on the main
    // thread this timer could only fire once the check had settled.
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        events.push('timer')
        resolve()
      }, 50),
    )
    const check = checkCommand(hostile, { deny: ['rm'], lister }).then(
      () => events.push('check passed'),
      (error: { code?: string }) => events.push(`check ${error.code}`),
    )
    await Promise.all([timer, check])
    // On the main thread the parse would hold the timer back until the check had settled.
    expect(events).toEqual(['timer', 'check size_exceeded'])
  })

  it('gives up on a check past its time limit, and answers the checks behind it from a fresh worker', async () => {
    // A stand-in worker with the same protocol, whose "hang" never returns: it shows the lister's
    // mechanics without depending on how fast this machine parses.
    const echo = `import { parentPort } from 'node:worker_threads'
      parentPort.on('message', ({ id, command }) => {
        if (command === 'hang') for (;;) {}
        parentPort.postMessage({ id, names: [{ name: command, dynamic: false }] })
      })`
    const impatient = createWorkerLister({
      url: new URL(`data:text/javascript,${encodeURIComponent(echo)}`),
      timeoutMs: 500,
    })
    try {
      expect(await impatient('warm')).toEqual([{ name: 'warm', dynamic: false }])
      const [stuck, behind] = await Promise.allSettled([impatient('hang'), impatient('behind')])
      expect(stuck.status).toBe('rejected')
      expect((stuck as PromiseRejectedResult).reason).toBeInstanceOf(ShellTooComplexError)
      expect(behind).toEqual({ status: 'fulfilled', value: [{ name: 'behind', dynamic: false }] })
      expect(await impatient('again')).toEqual([{ name: 'again', dynamic: false }])
    } finally {
      await impatient.close()
    }
  })

  it('reports a worker that cannot start instead of restarting it forever', async () => {
    const broken = createWorkerLister({ url: new URL('file:///nonexistent/policy-worker.js') })
    await expect(broken('ls')).rejects.toThrow(/could not start/)
    await broken.close()
  })
})
