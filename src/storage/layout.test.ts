import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { storageLayout, withLayoutTable } from './layout'

const root = new URL('../..', import.meta.url).pathname

function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })
}

describe('the storage key layout', () => {
  it('is the table docs/storage.md shows (npm run docs:storage)', () => {
    const document = readFileSync(join(root, 'docs/storage.md'), 'utf8')
    expect(withLayoutTable(document)).toBe(document)
  })

  it('names every top-level prefix of the bucket once', () => {
    const tops = storageLayout.map((entry) => entry.pattern.split('/')[0])
    expect(new Set(tops)).toEqual(
      new Set([
        'tenants',
        'approvals',
        'sources',
        'sync-markers',
        'oauth',
        'mcp-sessions',
        'audit',
        'usage',
        '.toolport-tmp',
      ]),
    )
  })

  it('is the only module that spells a storage prefix', () => {
    const prefixes = [
      'tenants/',
      'approvals/',
      'sources/operator',
      'sources/tenants',
      'sync-markers/',
      'oauth/',
      'usage.json',
      'jobs/',
      'mcp-sessions/',
      'audit/',
      'usage/',
    ]
    const offenders: string[] = []
    for (const file of sourceFiles('src')) {
      // layout.ts owns them; settings.ts names one in the text of a setting's documentation.
      if (file === 'src/storage/layout.ts' || file === 'src/sources/settings.ts') continue
      const code = readFileSync(join(root, file), 'utf8')
        .split('\n')
        // Comments and documentation strings may name a prefix; code that builds a key may not.
        .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
        .join('\n')
      for (const prefix of prefixes) {
        const quoted = new RegExp(`[\`'"]${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)
        if (quoted.test(code)) offenders.push(`${file}: ${prefix}`)
      }
    }
    expect(offenders).toEqual([])
  })
})
