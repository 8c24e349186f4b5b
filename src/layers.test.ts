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
  ['sandbox', 'workspace', 'jobs', 'approvals', 'audit', 'usage'],
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

/**
 * One hallway: a call is prepared, checked and decided once, by the caller (src/caller/); transports
 * (src/http/) only decode their request into the caller's prepare and encode what it answers, and a
 * tool is what its author writes. These checks hold that shape: each rule names where the one
 * implementation lives, and fails when a second one appears, or a transport reaches for call logic.
 */
const parsed = files.map((file) => ({
  file,
  source: ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022, true),
}))

/** Imports of a file that bring values (not `import type`, not only `type` names), by module specifier. */
function valueImports(source: ts.SourceFile): string[] {
  const found: string[] = []
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue
    const clause = statement.importClause
    if (clause?.isTypeOnly) continue
    const named = clause?.namedBindings
    const onlyTypes =
      clause !== undefined &&
      clause.name === undefined &&
      named !== undefined &&
      ts.isNamedImports(named) &&
      named.elements.every((element) => element.isTypeOnly)
    if (!onlyTypes) found.push(statement.moduleSpecifier.text)
  }
  return found
}

/** Every module a file imports, type-only or not. */
function allImports(source: ts.SourceFile): string[] {
  return source.statements.flatMap((statement) =>
    ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)
      ? [statement.moduleSpecifier.text]
      : [],
  )
}

/** Files (outside `except`) whose text matches the pattern: a call of a function, a read of the key's policy. */
function callersOf(pattern: RegExp, except: readonly string[]): string[] {
  return parsed
    .filter(({ file, source }) => !except.includes(file) && pattern.test(source.text))
    .map(({ file }) => file)
}

describe('one hallway', () => {
  it('keeps call logic out of the transports: src/http/ takes only types from auth/principal and nothing from platforms/nulls', () => {
    const http = parsed.filter(({ file }) => file.startsWith('http/'))
    expect(
      http.filter(({ source }) => valueImports(source).some((specifier) => specifier.endsWith('auth/principal'))),
    ).toEqual([])
    expect(
      http.filter(({ source }) => allImports(source).some((specifier) => specifier.endsWith('platforms/nulls'))),
    ).toEqual([])
  })

  it('has one permission check, one approval decision and one input parser, each called from the caller only', () => {
    // The key's scope: the catalog filters what a key sees with mayCall; a call is checked once, in the caller.
    expect(callersOf(/\bassertToolAllowed\(/, ['auth/principal.ts'])).toEqual(['caller/caller.ts'])
    expect(callersOf(/\bmayCall\(/, ['auth/principal.ts'])).toEqual(['catalog/catalog.ts'])
    // Whether a call waits for an approver: needsApproval, and nothing else reads the key's policy.
    expect(callersOf(/requireApproval\.has\(/, [])).toEqual(['caller/approvals.ts'])
    // The input: nulls dropped, then the tool's own schema, for every transport.
    expect(callersOf(/\bstripNullOptionals\(/, ['platforms/nulls.ts'])).toEqual(['caller/input.ts'])
    expect(callersOf(/\.input\.(safeParse|parse|parseAsync|safeParseAsync)\(/, [])).toEqual(['caller/input.ts'])
  })

  it('runs every call through one verb: no invoke, invokeTool or execute beside run in the caller', () => {
    const caller = parsed.filter(({ file }) => file.startsWith('caller/'))
    expect(caller.filter(({ source }) => /\b(invoke|invokeTool)\b/.test(source.text)).map(({ file }) => file)).toEqual(
      [],
    )
  })

  it('writes a tool as its author does: the author type has none of the catalog’s fields', () => {
    const tool = parsed.find(({ file }) => file === 'tools/tool.ts')?.source as ts.SourceFile
    const declaration = tool.statements.find(
      (statement): statement is ts.InterfaceDeclaration =>
        ts.isInterfaceDeclaration(statement) && statement.name.text === 'Tool',
    )
    const members = declaration?.members.map((member) => member.name?.getText(tool)) ?? []
    expect(members).toContain('run')
    const catalogFields = [
      'id',
      'source',
      'aliasOf',
      'tenantSource',
      'everyKey',
      'describedBy',
      'runsInline',
      'schemas',
    ]
    expect(members.filter((name) => name !== undefined && catalogFields.includes(name))).toEqual([])
  })

  // The checks must be able to fail: a transport importing a check, and a second parser, are caught.
  it('catches a transport that imports call logic', () => {
    const made = ts.createSourceFile(
      'http/routes/made.ts',
      "import { assertToolAllowed, type Principal } from '../../auth/principal'\nimport type { Call } from '../../caller/call'\n",
      ts.ScriptTarget.ES2022,
      true,
    )
    expect(valueImports(made)).toEqual(['../../auth/principal'])
    const typesOnly = ts.createSourceFile(
      'http/routes/made.ts',
      "import type { Principal } from '../../auth/principal'\nimport { type Principal as P } from '../../auth/principal'\n",
      ts.ScriptTarget.ES2022,
      true,
    )
    expect(valueImports(typesOnly)).toEqual([])
  })
})
