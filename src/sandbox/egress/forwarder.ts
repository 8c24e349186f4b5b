import { execFile } from 'node:child_process'
import { mkdir, realpath, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { forwarderSource } from './forwarder-source'

/**
 * The forwarder: the one piece of toolport that runs inside the sandbox when a call has network. It
 * listens on the sandbox's own loopback, relays each connection to the proxy's Unix socket (bound
 * into the sandbox at socketTarget), sets HTTP_PROXY and friends, and runs the command as its child.
 *
 * It is the service's own Node binary running a small script, bind-mounted read-only with the
 * libraries that binary links and their dynamic loader, so it needs nothing from the sandbox: not
 * under bwrap (which sees the host's /usr anyway) and not in a container whose image has no Node (the
 * loader is started directly: `ld.so --library-path /run/toolport/lib /run/toolport/node …`).
 */
export const egressFolder = '/run/toolport'
export const socketTarget = `${egressFolder}/egress.sock`
const nodeTarget = `${egressFolder}/node`
export const scriptTarget = `${egressFolder}/forwarder.cjs`
const libraryFolder = `${egressFolder}/lib`

export interface ForwarderRuntime {
  /** Host path of the Node binary (the service's own). */
  node: string
  /** Host path of the forwarder script. */
  script: string
  /** The dynamic loader and the shared libraries node links, by the name the loader looks for; none for a static binary. */
  loader: { path: string; name: string } | undefined
  libraries: Array<{ path: string; name: string }>
}

export interface Mount {
  source: string
  target: string
}

/** Writes the script into folder and finds what the Node binary links (with ldd). */
export async function prepareForwarder(folder: string, nodePath = process.execPath): Promise<ForwarderRuntime> {
  await mkdir(folder, { recursive: true, mode: 0o711 })
  const script = join(folder, 'forwarder.cjs')
  await writeFile(script, forwarderSource, { mode: 0o644 })
  const node = await realpath(nodePath)
  const linked = await linkedLibraries(node)
  return { node, script, ...linked }
}

/** ldd's answer: "name => /path (0x…)" per library and "/path/ld-….so.2 (0x…)" for the loader. */
async function linkedLibraries(program: string): Promise<Pick<ForwarderRuntime, 'loader' | 'libraries'>> {
  const output = await new Promise<string>((resolve) => {
    execFile('ldd', [program], { timeout: 20_000 }, (error, stdout) => resolve(error ? '' : stdout))
  })
  const libraries: ForwarderRuntime['libraries'] = []
  let loader: ForwarderRuntime['loader']
  for (const line of output.split('\n')) {
    const library = /^\s*(\S+) => (\/\S+) \(/.exec(line)
    if (library) {
      libraries.push({ name: library[1] as string, path: await realpath(library[2] as string) })
      continue
    }
    const interpreter = /^\s*(\/\S+) \(/.exec(line)
    if (interpreter) {
      const path = interpreter[1] as string
      loader = { name: basename(path), path: await realpath(path) }
    }
  }
  return { loader, libraries: loader ? libraries : [] }
}

/**
 * What the sandbox must see for the forwarder: the socket, the script (unless the executor hands it
 * over as data), node, and (for an image that may lack the host's libraries) node's loader and libraries.
 */
export function forwarderMounts(
  runtime: ForwarderRuntime,
  socketPath: string,
  ownLibraries: boolean,
  withScript = true,
): Mount[] {
  const mounts: Mount[] = [
    { source: socketPath, target: socketTarget },
    ...(withScript ? [{ source: runtime.script, target: scriptTarget }] : []),
    { source: runtime.node, target: nodeTarget },
  ]
  if (ownLibraries && runtime.loader) {
    for (const library of [runtime.loader, ...runtime.libraries])
      mounts.push({ source: library.path, target: `${libraryFolder}/${library.name}` })
  }
  return mounts
}

/** The argv that runs command (an argv itself) behind the forwarder. */
export function forwarderArgv(runtime: ForwarderRuntime, command: readonly string[], ownLibraries: boolean): string[] {
  const forwarder = [nodeTarget, scriptTarget, socketTarget, '--', ...command]
  if (!ownLibraries || !runtime.loader) return forwarder
  return [`${libraryFolder}/${runtime.loader.name}`, '--library-path', libraryFolder, ...forwarder]
}
