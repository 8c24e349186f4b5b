import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { brokenLinks } from '../support/markdown-links'

const root = new URL('../..', import.meta.url).pathname
const readme = join(root, 'README.md')
const pages = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => join(root, 'docs', name))

describe('the README and docs/', () => {
  it('keep the README a front door: the two commands first, at most 250 lines', () => {
    const lines = readFileSync(readme, 'utf8').split('\n')
    expect(lines.length).toBeLessThanOrEqual(250)
    const opening = lines.slice(0, 60).join('\n')
    expect(opening).toContain('npm ci && npm start')
    expect(opening).toContain('npm test')
  })

  it('link from the README to every page of docs/', () => {
    const text = readFileSync(readme, 'utf8')
    for (const page of pages) expect(text, page).toContain(`](docs/${page.split('/').at(-1)})`)
  })

  it('have no broken relative link or anchor', () => {
    expect([readme, join(root, 'SECURITY.md'), ...pages].flatMap(brokenLinks)).toEqual([])
  })

  it('the link check finds a broken file and a broken anchor', () => {
    const broken = brokenLinks(join(root, 'test/fixtures/broken-links.md'))
    expect(broken).toHaveLength(2)
    expect(broken[0]).toMatch(/nowhere\.md \(no such file\)/)
    expect(broken[1]).toMatch(/#no-such-heading \(no such heading\)/)
  })
})
