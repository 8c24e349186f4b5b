import { spawn } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { watchListening } from './listening'
import { runMixedLoad } from './load'

export interface SoakSample {
  round: number
  requests: number
  rssBytes: number
  openFiles: number
}

export interface SoakReport {
  samples: SoakSample[]
  status5xx: number
  errors: number
  /** Files whose stored content differs from what the clients last wrote (must be 0). */
  lost: number
  /** Growth between the first sample (after warm-up) and the last. */
  rssGrowthBytes: number
  openFilesGrowth: number
}

async function sample(pid: number, url: string, round: number, requests: number): Promise<SoakSample> {
  const metrics = await fetch(`${url}/metrics`).then((response) => response.text())
  const rss = Number(/^toolport_process_resident_memory_bytes (\d+)/m.exec(metrics)?.[1] ?? Number.NaN)
  const openFiles = (await readdir(`/proc/${pid}/fd`)).length
  return { round, requests, rssBytes: rss, openFiles }
}

/**
 * Runs the built service (dist/node.js) under rounds of mixed load and samples its resident memory
 * (from /metrics) and open file descriptors (from /proc) after each round. The first round is warm-up.
 */
export async function soak(options: {
  root: string
  dataDir: string
  rounds: number
  roundSeconds: number
  connections: number
}): Promise<SoakReport> {
  const child = spawn(process.execPath, ['dist/node.js'], {
    cwd: options.root,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      TOOLPORT_DATA_DIR: options.dataDir,
      TOOLPORT_WORK_DIR: join(options.dataDir, 'work'),
      TOOLPORT_SANDBOX: 'none',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  try {
    const url = await watchListening(child, { drain: true }).url
    const samples: SoakSample[] = []
    let status5xx = 0
    let errors = 0
    let written = new Map<string, string>()
    for (let round = 0; round <= options.rounds; round++) {
      const result = await runMixedLoad({
        url,
        connections: options.connections,
        durationSeconds: options.roundSeconds,
      })
      written = result.written
      status5xx += result.status5xx
      errors += result.errors + result.timeouts
      // Let sockets settle so descriptors of finished connections are closed before counting.
      await new Promise((resolve) => setTimeout(resolve, 500))
      samples.push(await sample(child.pid as number, url, round, result.requests))
    }
    // Checksum pass: every path the clients wrote holds exactly what they wrote (paths never written stay absent).
    let lost = 0
    for (const [path, content] of written) {
      const response = await fetch(`${url}/v1/tools/read_file?workspace=load`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ path }),
      })
      if (response.status === 404) continue
      const body = (await response.json()) as { content?: string }
      if (body.content !== content) lost++
    }
    const first = samples[1] ?? samples[0]
    const last = samples.at(-1)
    return {
      samples,
      status5xx,
      errors,
      lost,
      rssGrowthBytes: (last?.rssBytes ?? 0) - (first?.rssBytes ?? 0),
      openFilesGrowth: (last?.openFiles ?? 0) - (first?.openFiles ?? 0),
    }
  } finally {
    child.kill('SIGKILL')
  }
}
