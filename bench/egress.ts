// Sandbox egress: a 50 MB download and one HTTPS request through the egress proxy (inside the bwrap
// sandbox, through the relay (socat, or the Node forwarder) and the proxy) against the same transfers straight from the host.
import { execFile } from 'node:child_process'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { loadConfig } from '../src/config/config'
import { silentLogger } from '../src/core/logger'
import { setupShell } from '../src/sandbox/setup'
import { createMemoryStorage } from '../src/storage/memory'
import { toolNames } from '../src/tools/builtins'
import { note, printRows, printTable, summarize, timePair } from './stats'
import { startChild } from './support/child'

const run = promisify(execFile)
const downloads = Number(process.env.BENCH_EGRESS_DOWNLOADS ?? 10)
const requests = Number(process.env.BENCH_EGRESS_REQUESTS ?? 20)
// Two relays (socat or the Node forwarder, and the proxy) and a target check on loopback: a few milliseconds at most.
const addedLatencyTargetMs = 5
// A call with network against one without (issue #43): the proxy session and the relay starting.
const egressStartTarget = 1.3
const calls = Number(process.env.BENCH_ITERATIONS ?? 30)
const downloadBytes = 50 * 1024 * 1024
const host = 'fixture.test'
const upstreamScript = fileURLToPath(new URL('support/egress-upstream.ts', import.meta.url))

const upstream = await startChild(['--import', 'tsx', upstreamScript])
const work = await mkdtemp(join(tmpdir(), 'toolport-bench-egress-'))
await chmod(work, 0o711)
try {
  const { http, https, certificate } = upstream.ready as { http: number; https: number; certificate: string }
  const allowed = `${host}:${http},${host}:${https}`
  const config = loadConfig(
    {
      TOOLPORT_WORK_DIR: join(work, 'work'),
      TOOLPORT_SHELL_EGRESS: 'allow',
      TOOLPORT_SHELL_EGRESS_ALLOW: allowed,
      TOOLPORT_FETCH_ALLOW_HOSTS: allowed,
    },
    { toolNames },
  )
  const { shell, problem } = await setupShell(config.sandbox, process.env, silentLogger, {
    maxFileBytes: config.calls.maxFileBytes,
    egress: {
      settings: config.egress,
      trustedHosts: config.net.allowHosts,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    },
  })
  if (!shell) throw new Error(`no sandbox: ${problem}`)
  // socat where installed (TOOLPORT_SHELL_EGRESS_RELAY=auto), else the service's Node as the forwarder.
  const relay = JSON.stringify(shell.status()).includes('through socat') ? 'socat' : 'the Node forwarder'
  const storage = createMemoryStorage()
  await storage.put('tenants/bench/workspaces/egress/ca.pem', certificate)
  const sandboxed = (command: string, egress: boolean) =>
    shell.execute({
      storage,
      tenant: 'bench',
      workspacePrefix: 'tenants/bench/workspaces/egress/',
      command,
      cwd: '',
      timeoutMs: 600_000,
      signal: new AbortController().signal,
      egress: egress
        ? [{ source: 'server', policy: shell.egress.policy }]
        : [{ source: 'call', policy: { mode: 'none' } }],
    })

  const curlTimes = (url: string, count: number, extra: string) =>
    `for i in $(seq ${count}); do curl -sS -o /dev/null ${extra} -w '%{time_total}\\n' ${url}; done`
  // curl times each transfer itself (time_total), so the sandbox's start is in no figure.
  const throughSandbox = async (url: string, count: number, extra = '') => {
    const result = await sandboxed(curlTimes(url, count, extra), true)
    if (result.exitCode !== 0) throw new Error(`curl in the sandbox failed: ${result.output.text}`)
    return secondsList(result.stdout.text)
  }
  const fromHost = async (url: string, count: number, extra = '') => {
    const resolve = `--resolve ${host}:${new URL(url).port}:127.0.0.1`
    const { stdout } = await run('/bin/sh', ['-c', curlTimes(url, count, `${resolve} ${extra}`)], { cwd: work })
    return secondsList(stdout)
  }
  /**
   * Pairs of runs, host then sandbox, so a machine busy with other work slows both sides alike. Each
   * run makes two transfers and keeps the second: the first warms the connection path (and, in the
   * sandbox, the freshly started relay).
   */
  const paired = async (url: string, pairs: number, hostExtra = '', sandboxExtra = '') => {
    const direct: number[] = []
    const proxied: number[] = []
    for (let index = 0; index < pairs; index++) {
      direct.push((await fromHost(url, 2, hostExtra))[1] as number)
      proxied.push((await throughSandbox(url, 2, sandboxExtra))[1] as number)
    }
    return { direct: summarize(direct), proxied: summarize(proxied) }
  }

  // 50 MB through the proxy against the same download on the host: from an upstream paced like a
  // 1 Gbit/s link (what a registry or source host is, seen from a server), and from one as fast as
  // loopback memory copies go. The target is the first: the proxy must keep up with a real network.
  // The second shows the proxy's own ceiling: on loopback every byte is copied by four processes
  // (upstream, proxy, relay, curl) instead of two, on the same two cores.
  const megabytes = (seconds: number) => downloadBytes / 1024 / 1024 / seconds
  const lineRate = 125_000_000
  const rows: string[][] = []
  for (const [label, query, target] of [
    ['at 1 Gbit/s', `?rate=${lineRate}`, true],
    ['unpaced (loopback memory speed)', '', false],
  ] as const) {
    const { direct, proxied } = await paired(`http://${host}:${http}/bytes/${downloadBytes}${query}`, downloads)
    const share = megabytes(proxied.p50) / megabytes(direct.p50)
    rows.push(
      [
        `curl on the host, direct, ${label}`,
        `${(direct.p50 * 1000).toFixed(1)} ms`,
        `${megabytes(direct.p50).toFixed(0)} MB/s`,
        String(direct.samples),
        '',
        '',
      ],
      [
        `curl in the sandbox, through ${relay} and proxy, ${label}`,
        `${(proxied.p50 * 1000).toFixed(1)} ms`,
        `${megabytes(proxied.p50).toFixed(0)} MB/s`,
        String(proxied.samples),
        `${(share * 100).toFixed(0)}%`,
        target ? `≥ 70% ${share >= 0.7 ? 'met' : 'MISSED'}` : '',
      ],
    )
  }
  printRows(
    'sandbox egress: 50 MB download through the proxy',
    ['what', 'p50', 'throughput (p50)', 'n', 'share of direct', 'target'],
    ['l', 'r', 'r', 'r', 'r', 'l'],
    rows,
  )

  // One HTTPS request (TLS handshake and all) through CONNECT against the same request on the host.
  const httpsUrl = `https://${host}:${https}/`
  const hostCa = join(work, 'ca.pem')
  await writeFile(hostCa, certificate)
  const { direct: directHttps, proxied: proxiedHttps } = await paired(
    httpsUrl,
    requests,
    `--cacert ${hostCa}`,
    '--cacert ca.pem',
  )
  const milliseconds = (stats: ReturnType<typeof summarize>) => ({
    ...stats,
    p50: stats.p50 * 1000,
    p90: stats.p90 * 1000,
    min: stats.min * 1000,
    max: stats.max * 1000,
  })
  const added = (proxiedHttps.p50 - directHttps.p50) * 1000
  const format = (stats: ReturnType<typeof summarize>) => `${stats.p50.toFixed(2)} ms`
  printRows(
    'sandbox egress: one HTTPS request (CONNECT, TLS handshake included)',
    ['what', 'p50', 'p90', 'n', 'added latency (p50)', 'target'],
    ['l', 'r', 'r', 'r', 'r', 'l'],
    [
      [
        'curl on the host, direct',
        format(milliseconds(directHttps)),
        `${(directHttps.p90 * 1000).toFixed(2)} ms`,
        String(directHttps.samples),
        '',
        '',
      ],
      [
        `curl in the sandbox, through ${relay} and proxy`,
        format(milliseconds(proxiedHttps)),
        `${(proxiedHttps.p90 * 1000).toFixed(2)} ms`,
        String(proxiedHttps.samples),
        `${added.toFixed(2)} ms`,
        `≤ ${addedLatencyTargetMs} ms ${added <= addedLatencyTargetMs ? 'met' : 'MISSED'}`,
      ],
    ],
  )

  // What a call with network pays once: the proxy session, and the relay starting in the sandbox. The two
  // are timed alternately, so that the machine's drift lands on both.
  const [withoutSamples, withSamples] = await timePair(
    () => sandboxed('true', false),
    () => sandboxed('true', true),
    calls,
  )
  const without = summarize(withoutSamples)
  const withEgress = summarize(withSamples)
  printTable('sandbox egress: `true` with and without network', [
    { name: 'execute_command sandbox, egress none', stats: without },
    {
      name: `execute_command sandbox, egress allow (${relay} + proxy session)`,
      stats: withEgress,
      baseline: without,
      target: egressStartTarget,
    },
  ])
  if (withEgress.p50 / without.p50 > egressStartTarget) {
    note(
      `sandbox egress start MISSED (${(withEgress.p50 / without.p50).toFixed(2)}×, ${(withEgress.p50 - without.p50).toFixed(1)} ms more than without network; target ≤ ${egressStartTarget}×; 3.38× until 2026-12-07, when the relay was the service's Node started inside the sandbox): ${
        relay === 'socat'
          ? "what a call with network still adds is socat's start inside the sandbox until it listens (exec and the dynamic linking of its 14 libraries: OpenSSL, Kerberos, libwrap, which its TCP and Unix addresses never use; `socat -V` alone takes 2.2 ms on this machine against 0.9 ms for /bin/true), the sandbox shell reading /proc/net/tcp until the socket is listed, two more bind mounts, and the proxy session on the host (the socket's bind, mode and owner, then its close). Plan: a relay that links nothing (a small static binary, built from source the project keeps, or socat built without OpenSSL and libwrap), or a network namespace made ahead with the rest of the start (warm-start.ts), with the relay already listening in it and bwrap joining it."
          : "socat is not installed here, so the relay is the Node forwarder: Node's own start (`env -i node -e 0` takes 20–30 ms on this machine), its listener and its spawn of the command. Install socat (Debian: apt-get install socat)."
      }`,
    )
  }
  note(
    `sandbox egress: transfers are timed by curl itself (time_total), so the sandbox's start is in no figure; host and sandbox runs alternate (${downloads} pairs of downloads, ${requests} of HTTPS requests), each keeping the second of two transfers. The last table is what a call with network pays once (the proxy session and the relay starting), timed alternately with the same call without network.`,
  )
} finally {
  await upstream.stop()
  await rm(work, { recursive: true, force: true })
}

function secondsList(text: string): number[] {
  return text
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((value) => Number.isFinite(value) && value > 0)
}
