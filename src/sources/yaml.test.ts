import { describe, expect, it } from 'vitest'
import { parseYaml } from './yaml'

describe('parseYaml', () => {
  it('parses YAML', async () => {
    expect(await parseYaml('name: tools\nlist: [a, b]\n')).toEqual({ name: 'tools', list: ['a', 'b'] })
  })

  it('refuses a document of nested aliases instead of expanding it', async () => {
    const rows = ['a: &a [x, x, x, x, x, x, x, x, x, x]']
    for (let level = 1; level < 12; level++) {
      const previous = String.fromCharCode(96 + level)
      const name = String.fromCharCode(97 + level)
      rows.push(`${name}: &${name} [${Array.from({ length: 10 }, () => `*${previous}`).join(', ')}]`)
    }
    await expect(parseYaml(rows.join('\n'))).rejects.toThrow(/alias/i)
  })
})
