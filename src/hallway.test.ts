import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * One hallway: a call is prepared, checked and decided once, by the caller (src/caller/); transports
 * (src/http/) only decode their request into the caller's prepare and encode what it answers, and a
 * tool is what its author writes. These checks hold that shape: each rule names where the one
 * implementation lives, and fails when a second one appears, or a transport reaches for call logic.
 */
const root = resolve(import.meta.dirname)

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

const files = sourceFiles(root).map((path) => ({
  file: relative(root, path),
  source: ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true),
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

/** Files (outside `except`) whose code calls `name(…)` or reads `.name(`. */
function callersOf(pattern: RegExp, except: readonly string[]): string[] {
  return files.filter(({ file, source }) => !except.includes(file) && pattern.test(source.text)).map(({ file }) => file)
}

describe('one hallway', () => {
  it('keeps call logic out of the transports: src/http/ takes only types from auth/principal and nothing from platforms/nulls', () => {
    const http = files.filter(({ file }) => file.startsWith('http/'))
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
    const caller = files.filter(({ file }) => file.startsWith('caller/'))
    expect(caller.filter(({ source }) => /\b(invoke|invokeTool)\b/.test(source.text)).map(({ file }) => file)).toEqual(
      [],
    )
  })

  it('writes a tool as its author does: the author type has none of the catalog’s fields', () => {
    const tool = files.find(({ file }) => file === 'tools/tool.ts')?.source as ts.SourceFile
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
