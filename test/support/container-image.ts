import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmod,
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * A small image for the container executor's tests, built here because no registry is reachable:
 * Debian's static busybox for the shell and its tools, plus this machine's node (the contract suite
 * uses node for its network and memory probes), curl and python3 (the egress suite's clients) with the
 * shared libraries they link. Imported with `<engine> import`, tagged by a hash of its inputs so it is
 * built once per machine.
 */
export async function ensureTestImage(engine: 'podman' | 'docker' = 'podman'): Promise<string> {
  const busybox = await realpath('/bin/busybox')
  const node = await realpath(process.execPath)
  // The egress suite's clients: curl, and Python's urllib with the standard library it needs.
  const curl = await realpath('/usr/bin/curl')
  const python = await realpath('/usr/bin/python3')
  const pythonLibrary = `/usr/lib/${basename(python)}`
  const modules = await listFiles(pythonLibrary)
  const extensions = modules.filter((file) => file.endsWith('.so'))
  const linked = await Promise.all([busybox, node, curl, python, ...extensions].map(linkedLibraries))
  const libraries = [...new Set(linked.flat())]
  const hash = createHash('sha256')
  for (const file of [busybox, node, curl, python, ...libraries]) hash.update(file).update(await readFile(file))
  for (const file of modules) hash.update(`${file}:${(await stat(file)).size}`)
  const image = `localhost/toolport-sandbox-test:${hash.digest('hex').slice(0, 16)}`
  if (await imageExists(engine, image)) return image

  const root = await mkdtemp(join(tmpdir(), 'toolport-image-'))
  try {
    for (const folder of ['bin', 'usr/bin', 'etc', 'workspace', 'tmp', 'proc', 'dev', 'sys'])
      await mkdir(join(root, folder), { recursive: true })
    await chmod(join(root, 'tmp'), 0o1777)
    await copyFile(busybox, join(root, 'bin/busybox'))
    const { stdout } = await run(busybox, ['--list'])
    for (const applet of stdout.split('\n').filter((name) => name && name !== 'busybox'))
      await symlink('busybox', join(root, 'bin', applet))
    await copyFile(node, join(root, 'usr/bin/node'))
    await copyFile(curl, join(root, 'usr/bin/curl'))
    await copyFile(python, join(root, 'usr/bin', basename(python)))
    await symlink(basename(python), join(root, 'usr/bin/python3'))
    await cp(pythonLibrary, join(root, pythonLibrary), { recursive: true })
    for (const library of libraries) {
      await mkdir(join(root, dirname(library)), { recursive: true })
      await copyFile(library, join(root, library))
    }
    await writeFile(
      join(root, 'etc/passwd'),
      'root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n',
    )
    await writeFile(join(root, 'etc/group'), 'root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n')
    // Beside this build's own folder: two suites building the same image at once (the first run on a
    // machine) must not write one archive while the other imports it.
    const archive = `${root}.tar`
    await run('tar', ['-C', root, '-cf', archive, '.'])
    try {
      await run(engine, ['import', '--change', 'ENV PATH=/usr/local/bin:/usr/bin:/bin', archive, image])
    } finally {
      await rm(archive, { force: true })
    }
    return image
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

/** Containers the container executor labelled and that still exist (none should outlive a call). */
export async function leftoverContainers(engine: 'podman' | 'docker'): Promise<string[]> {
  const { stdout } = await run(engine, ['ps', '--all', '--filter', 'label=io.toolport.run', '--format', '{{.Names}}'])
  return stdout.split('\n').filter(Boolean)
}

async function listFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true })
  // parentPath is Node 20.12+; path is its older name.
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? (entry as { path?: string }).path ?? folder, entry.name))
}

async function imageExists(engine: string, image: string): Promise<boolean> {
  const args = engine === 'podman' ? ['image', 'exists', image] : ['image', 'inspect', image]
  return run(engine, args).then(
    () => true,
    () => false,
  )
}

/** Shared libraries a dynamically linked program loads, as real paths; none for a static one. */
async function linkedLibraries(program: string): Promise<string[]> {
  const { stdout } = await run('ldd', [program]).catch(() => ({ stdout: '' }))
  const paths = [...stdout.matchAll(/(\/\S+\.so[^\s]*)/g)].map((match) => match[1] as string)
  // Keep the path the loader looks up (e.g. /lib64/ld-linux-x86-64.so.2), with the file's real bytes.
  return [...new Set(paths)]
}
