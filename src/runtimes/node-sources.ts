import { type FSWatcher, watch } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { SourceRuntime } from '../app'
import type { Config } from '../config/config'
import type { Logger } from '../core/logger'
import { createNodeHttpClient } from '../net/node-http'
import type { FeedFile, SourceHost } from '../sources/host/source-host'
import { maxManifestBytes } from '../sources/manifest'
import type { ToolServices } from '../tools/services'

/** What sources get from the Node runtime: sandboxed processes, clients for operator hosts, the environment. */
export function nodeSourceRuntime(
  config: Config,
  env: Record<string, string | undefined>,
  services: ToolServices,
  // Lambda: an execution environment freezes between invocations, so nothing is kept open.
  options: { keepWarm: boolean } = { keepWarm: true },
): SourceRuntime {
  const start = services.shell?.start
  const clients = new Map<string, ReturnType<typeof createNodeHttpClient>>()
  return {
    ...(start ? { processes: { start } } : {}),
    httpAllowing: (hosts) => {
      const key = [...hosts].sort().join(',')
      let client = clients.get(key)
      if (!client) {
        client = createNodeHttpClient({ policy: { allowHosts: [...config.net.allowHosts, ...hosts] } })
        clients.set(key, client)
      }
      return client
    },
    keepWarm: options.keepWarm,
    environment: env,
  }
}

// Editors write a file in several steps: read the folder once things settle.
const settleMs = 200

/**
 * Feeds TOOLPORT_SOURCES_DIR to the sources: read now, then again whenever the folder changes (and at
 * the refresh interval, for filesystems whose change events do not arrive). Each `{id}.json` or
 * `{id}.yaml` file is one operator source; a file past the size limit is a source in error.
 */
export async function watchSourcesFolder(
  host: SourceHost,
  folder: string,
  refreshMs: number,
  log: Logger,
): Promise<{ close(): void }> {
  const root = resolve(folder)
  let timer: ReturnType<typeof setTimeout> | undefined
  let reading: Promise<void> = Promise.resolve()
  const read = () => {
    reading = reading.then(async () => {
      try {
        await host.setFeed('folder', await readFolder(root))
      } catch (error) {
        log.warn('TOOLPORT_SOURCES_DIR could not be read', { folder: root, cause: String(error) })
      }
    })
    return reading
  }
  await read()
  const schedule = () => {
    clearTimeout(timer)
    timer = setTimeout(() => void read(), settleMs)
  }
  let watcher: FSWatcher | undefined
  try {
    watcher = watch(root, schedule)
    watcher.on('error', () => {})
  } catch (error) {
    log.warn('TOOLPORT_SOURCES_DIR cannot be watched; it is read at the refresh interval', { cause: String(error) })
  }
  const poll = setInterval(() => void read(), refreshMs)
  poll.unref()
  return {
    close() {
      clearTimeout(timer)
      clearInterval(poll)
      watcher?.close()
    },
  }
}

async function readFolder(root: string): Promise<FeedFile[]> {
  const files: FeedFile[] = []
  for (const name of (await readdir(root)).sort()) {
    const path = join(root, name)
    const info = await stat(path).catch(() => undefined)
    if (info?.isDirectory()) {
      const plugin = await readPluginFolder(path, name)
      if (plugin) files.push(plugin)
      continue
    }
    const match = /\.(json|ya?ml)$/.exec(name)
    if (!match || !info?.isFile()) continue
    files.push({ name, format: match[1] === 'json' ? 'json' : 'yaml', text: await readManifest(path, info.size) })
  }
  return files
}

// Too large a file still shows up, as a source whose error says why.
function readManifest(path: string, size: number): Promise<string> {
  return size > maxManifestBytes ? Promise.resolve(' '.repeat(maxManifestBytes + 1)) : readFile(path, 'utf8')
}

/** Where a plugin folder's files are inside the sandbox (read-only). */
const pluginMount = '/plugin'

/**
 * A plugin dropped in as a folder (reference 002's layout): its `manifest.json` (or `.yaml`) and the
 * worker beside it, which runs in the sandbox with the folder mounted read-only at /plugin. The folder's
 * name gives the source id. Folders without a manifest are not sources.
 */
async function readPluginFolder(folder: string, name: string): Promise<FeedFile | undefined> {
  for (const [file, format] of [
    ['manifest.json', 'json'],
    ['manifest.yaml', 'yaml'],
    ['manifest.yml', 'yaml'],
  ] as const) {
    const info = await stat(join(folder, file)).catch(() => undefined)
    if (!info?.isFile()) continue
    const command = await workerCommand(folder)
    return {
      name,
      format,
      text: await readManifest(join(folder, file), info.size),
      ...(command ? { defaults: { worker: { command, mounts: [{ host: folder, sandbox: pluginMount }] } } } : {}),
    }
  }
  return undefined
}

/** The worker a plugin folder holds, as the argv that starts it inside the sandbox. */
async function workerCommand(folder: string): Promise<string[] | undefined> {
  const byInterpreter: Array<[string, string[]]> = [
    ['worker.mjs', ['node']],
    ['worker.js', ['node']],
    ['worker.cjs', ['node']],
    ['worker.py', ['python3']],
    ['worker.jar', ['java', '-jar']],
    ['worker', []],
  ]
  for (const [file, interpreter] of byInterpreter) {
    const info = await stat(join(folder, file)).catch(() => undefined)
    if (info?.isFile()) return [...interpreter, `${pluginMount}/${file}`]
  }
  return undefined
}
