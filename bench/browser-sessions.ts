// Browser sessions, both rows of issue #19 in one run:
// - a warm session's browser_click + snapshot round trip (POST /v1/tools/browser_click through the app
//   in process: auth off, validation, the session lookup, the click on a ref, waiting for what it
//   started, the accessibility snapshot and its text) against the same actions in a bare puppeteer-core
//   script on the same Chromium build (click the element, take the accessibility snapshot), target ≤ 1.5×;
// - memory per open session: the RSS of every Chromium process before and after opening sessions on
//   the same page, divided by their number (reported, no target).
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app'
import type { ChromiumBrowser } from '../src/browser/chromium'
import { chromiumArgs, extractChromium } from '../src/browser/extract'
import { loadConfig } from '../src/config/config'
import { silentLogger } from '../src/core/logger'
import { createNodeServices } from '../src/runtimes/node-services'
import { createMemoryStorage } from '../src/storage/memory'
import { toolNames } from '../src/tools/builtins'
import { note, printRows, printTable, summarize, timePair } from './stats'

const iterations = Number(process.env.BENCH_ITERATIONS ?? 40)
const sessionsForMemory = Number(process.env.BENCH_SESSIONS ?? 6)

// A page of the size a model works on: a heading, a toolbar button that counts its clicks, a form and a
// 20-row table (about 120 accessibility nodes).
const html = `<!doctype html><html><head><title>Bench</title></head><body><h1>Orders</h1>
<button id="more" onclick="this.textContent = 'Clicked ' + (++window.count || (window.count = 1))">Click me</button>
<form><label>Search <input name="q"></label><select name="s"><option>All</option><option>Open</option></select></form>
<table><tr><th>Id</th><th>Item</th><th>Total</th></tr>${Array.from({ length: 20 }, (_, index) => `<tr><td>${index}</td><td><a href="#o${index}">Order ${index}</a></td><td>${index * 3}.00</td></tr>`).join('')}</table>
</body></html>`
const site = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'text/html' })
  response.end(html)
})
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`

const dataDir = await mkdtemp(join(tmpdir(), 'toolport-bench-browser-'))
const config = loadConfig(
  {
    TOOLPORT_DATA_DIR: dataDir,
    TOOLPORT_WORK_DIR: join(dataDir, 'work'),
    TOOLPORT_FETCH_ALLOW_HOSTS: new URL(siteUrl).host,
    TOOLPORT_BROWSER_SESSIONS: String(sessionsForMemory + 2),
    TOOLPORT_BROWSER_SESSIONS_PER_TENANT: String(sessionsForMemory + 2),
  },
  { toolNames },
)
const { services } = await createNodeServices(config, {}, silentLogger, { shell: false })
const { app } = createApp({ config, storage: createMemoryStorage(), log: silentLogger, services })

// biome-ignore lint/suspicious/noExplicitAny: tool results are read field by field
async function tool(name: string, body: unknown): Promise<any> {
  const response = await app.request(`/v1/tools/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const result = await response.json()
  if (response.status !== 200) throw new Error(`${name} answered ${response.status}: ${JSON.stringify(result)}`)
  return result
}

/**
 * RSS and PSS of a process and all its descendants, in bytes (Linux /proc). Summed RSS counts every
 * page a process maps in full, so the Chromium binary and libraries every renderer maps count once per
 * renderer; PSS (smaps_rollup) divides each shared page among the processes that map it: summed over
 * the tree, it is the memory the tree takes from the machine.
 */
function treeMemory(root: number): { rss: number; pss: number } {
  const children = new Map<number, number[]>()
  const rss = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const parent = Number(fields[1])
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)])
      rss.set(Number(entry), Number(fields[21]) * 4096)
    } catch {}
  }
  let total = 0
  let pss = 0
  const stack = [root]
  while (stack.length > 0) {
    const pid = stack.pop() as number
    total += rss.get(pid) ?? 0
    try {
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024
    } catch {}
    stack.push(...(children.get(pid) ?? []))
  }
  return { rss: total, pss }
}

const puppeteer = await import('puppeteer-core')
const bare = await puppeteer.launch({
  executablePath: await extractChromium(),
  args: await chromiumArgs({ zygote: true }),
  headless: 'shell',
})
try {
  const opened = await tool('browser_open', { url: siteUrl })
  const id = opened.session_id as string
  const ref = /button "Click me" \[ref=(e\d+)\]/.exec(opened.snapshot)?.[1]
  if (!ref) throw new Error(`no button in the snapshot:\n${opened.snapshot}`)
  const barePage = await bare.newPage()
  await barePage.goto(siteUrl)

  const toolportRound = async () => {
    const answer = await tool('browser_click', { session_id: id, ref })
    if (!answer.snapshot.includes('Clicked')) throw new Error('the click did not show')
  }
  const bareRound = async () => {
    await barePage.click('#more')
    const tree = await barePage.accessibility.snapshot()
    if (!JSON.stringify(tree).includes('Clicked')) throw new Error('the click did not show')
  }
  // Warm-up: five rounds each (the first clicks change the button's label), then alternate.
  const samples = await timePair(toolportRound, bareRound, iterations, { warmups: 5 })
  const bareStats = summarize(samples[1])
  printTable('browser session: click + snapshot round trip, warm session', [
    { name: 'bare puppeteer-core: page.click + accessibility.snapshot', stats: bareStats },
    {
      name: 'toolport browser_click (app in-process; answers URL, title, tabs and the snapshot text)',
      stats: summarize(samples[0]),
      baseline: bareStats,
      target: 1.5,
    },
  ])
  note(
    `browser session round trip: ${iterations} rounds each after five discarded warm-up rounds each, toolport and bare alternating, on a page of about 120 accessibility nodes; both Chromiums are the @sparticuz/chromium build (toolport's with its egress proxy and target guard).`,
  )

  // Memory: the toolport Chromium's process tree before and after opening sessions on the same page.
  const host = await (services.browser as ChromiumBrowser | undefined)?.sessionHost()
  const pid = host?.browser.process()?.pid
  if (pid) {
    const before = treeMemory(pid)
    const extra: string[] = []
    for (let index = 0; index < sessionsForMemory; index++)
      extra.push((await tool('browser_open', { url: siteUrl })).session_id)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const after = treeMemory(pid)
    const mb = (bytes: number) => bytes / 2 ** 20
    const perSession = (field: 'rss' | 'pss') => mb(after[field] - before[field]) / sessionsForMemory
    // What one 2 GB instance holds: this process (the service, in-process here, with the bench's own
    // client) and the Chromium tree with one session open, then sessions at their PSS each.
    const service = mb(process.memoryUsage.rss())
    const most = Math.floor((2048 - service - mb(before.pss)) / perSession('pss'))
    const met = perSession('pss') <= 50
    printRows(
      'browser session: memory per open session',
      ['measure', 'Chromium tree before', 'after', 'per session', 'target'],
      ['l', 'r', 'r', 'r', 'l'],
      [
        [
          `summed RSS, ${sessionsForMemory} sessions opened on the bench page`,
          `${mb(before.rss).toFixed(0)} MB`,
          `${mb(after.rss).toFixed(0)} MB`,
          `${perSession('rss').toFixed(1)} MB`,
          '',
        ],
        [
          'summed PSS (the memory taken from the machine)',
          `${mb(before.pss).toFixed(0)} MB`,
          `${mb(after.pss).toFixed(0)} MB`,
          `${perSession('pss').toFixed(1)} MB`,
          `≤ 50 MB ${met ? 'met' : 'MISSED'}`,
        ],
      ],
    )
    note(
      `memory per session: the browser process and all its children (renderers, zygote, GPU, network). Summed RSS counts the pages every renderer shares (the Chromium binary, its libraries, the zygote's initialized pages) once per renderer, so it adds about 70 MB per session that the machine never spends; PSS divides each shared page among the processes that map it, and its sum is what the tree takes from the machine (the target is on it). Chromium keeps its zygote outside Lambda (src/browser/extract.ts), whose forked renderers share its initialized pages: 28 → 22 MB PSS per session (108 → 95 MB summed RSS) on this machine. One 2 GB instance holds about ${most} sessions at this size: 2048 MB less this process (${service.toFixed(0)} MB RSS: the service in-process with the bench's client) and the Chromium tree with one session (${mb(before.pss).toFixed(0)} MB PSS), before a page of its own weighs more than the bench page.`,
    )
    for (const extraId of extra) await tool('browser_close', { session_id: extraId })
  }
  await tool('browser_close', { session_id: id })
} finally {
  await bare.close()
  await services.browserSessions?.closeAll()
  await services.browser?.close()
  site.close()
  await rm(dataDir, { recursive: true, force: true })
}
