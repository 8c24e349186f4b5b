import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * The layers of src/, lowest first: a module may import from its own folder and from folders of a
 * lower layer, never from a higher one or from another folder of its own layer. The picture is in the
 * README ("How it is built"); each folder's README.md says what it is for.
 */
const layers: ReadonlyArray<readonly string[]> = [
  ['core'],
  ['storage', 'net', 'browser', 'auth'],
  ['sandbox', 'workspace', 'jobs', 'approvals'],
  ['downloads'],
  ['tools'],
  ['catalog'],
  ['sources'],
  ['platforms'],
  ['caller'],
  ['http'],
  ['config'],
  ['app.ts'],
  ['runtimes'],
  ['cli'],
]

/** Where `node:` modules may be imported: drivers, engines, Node-only tools and the runtimes. */
const nodeImportsAllowed = [
  /^storage\/(fs|fs-[a-z]+|time-slices)\.ts$/,
  /^net\/node-http\.ts$/,
  /^sandbox\//,
  /^browser\//,
  /^tools\/documents\//,
  /^runtimes\//,
  /^cli\//,
]

const root = resolve(import.meta.dirname)

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** Every module specifier a file names: static imports and exports, type-only ones, and import(). */
function specifiers(path: string): string[] {
  return ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles.map((file) => file.fileName)
}

function resolveLocal(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  const base = resolve(dirname(from), specifier)
  for (const candidate of [`${base}.ts`, join(base, 'index.ts'), base]) {
    try {
      if (statSync(candidate).isFile()) return relative(root, candidate)
    } catch {}
  }
  throw new Error(`${relative(root, from)}: cannot resolve ${specifier}`)
}

/** The top folder of a file under src/ ("sandbox" for sandbox/mirror/scan.ts; "app.ts" for app.ts). */
const folderOf = (file: string) => file.split('/')[0] as string
const rankOf = (file: string) => layers.findIndex((layer) => layer.includes(folderOf(file)))

const files = sourceFiles(root).map((path) => relative(root, path))
const graph = new Map(
  files.map((file) => [
    file,
    specifiers(join(root, file)).flatMap((specifier) => {
      const target = resolveLocal(join(root, file), specifier)
      return target ? [target] : []
    }),
  ]),
)

/** Import cycles as lists of files (strongly connected components with more than one file, or a self-import). */
function cycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop() as string
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || edges.get(node)?.includes(node)) found.push(component.sort())
  }
  for (const node of edges.keys()) if (!index.has(node)) visit(node)
  return found
}

/** Imports that point up the layers, or sideways into another folder of the same layer. */
function violations(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = []
  for (const [file, targets] of edges) {
    for (const target of targets) {
      if (folderOf(target) === folderOf(file)) continue
      if (rankOf(target) >= rankOf(file)) found.push(`${file} -> ${target}`)
    }
  }
  return found
}

describe('layers of src/', () => {
  it('places every top folder in a layer', () => {
    const unplaced = [...new Set(files.map(folderOf))].filter((folder) => rankOf(folder) === -1)
    expect(unplaced).toEqual([])
  })

  it('has no import from a higher layer or from another folder of the same layer', () => {
    expect(violations(graph)).toEqual([])
  })

  it('has no import cycle, type-only and dynamic imports included', () => {
    expect(cycles(graph)).toEqual([])
  })

  it('keeps core free of project imports and node: modules to drivers, engines and runtimes', () => {
    const nodeImports = files.filter(
      (file) =>
        specifiers(join(root, file)).some((specifier) => specifier.startsWith('node:')) &&
        !nodeImportsAllowed.some((pattern) => pattern.test(file)),
    )
    expect(nodeImports).toEqual([])
    const coreImports = files.filter((file) => folderOf(file) === 'core' && (graph.get(file) ?? []).length > 0)
    expect(coreImports.flatMap((file) => graph.get(file)?.filter((target) => folderOf(target) !== 'core'))).toEqual([])
  })

  it('gives every folder a README.md that says what it is for', () => {
    const folders = [...new Set(files.map((file) => dirname(file)).filter((folder) => folder !== '.'))]
    const missing = folders.filter((folder) => {
      try {
        return readFileSync(join(root, folder, 'README.md'), 'utf8').trim() === ''
      } catch {
        return true
      }
    })
    expect(missing).toEqual([])
  })

  // The checks must be able to fail: a made-up graph with an upward import and a cycle is caught.
  it('catches an upward import and a cycle in a made-up graph', () => {
    const made = new Map<string, string[]>([
      ['storage/fs.ts', ['tools/tool.ts']],
      ['tools/tool.ts', ['storage/fs.ts']],
      ['http/routes/a.ts', ['http/routes/b.ts']],
      ['http/routes/b.ts', ['http/routes/a.ts', 'runtimes/node.ts']],
    ])
    expect(violations(made)).toEqual(['storage/fs.ts -> tools/tool.ts', 'http/routes/b.ts -> runtimes/node.ts'])
    expect(cycles(made)).toEqual([
      ['storage/fs.ts', 'tools/tool.ts'],
      ['http/routes/a.ts', 'http/routes/b.ts'],
    ])
  })
})
