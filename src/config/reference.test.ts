import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { settingsDeclarations } from './config'
import { renderConfigurationReference } from './reference'

describe('docs/configuration.md', () => {
  it('is the reference rendered from the settings declarations (npm run docs:config)', () => {
    const committed = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
    expect(committed).toBe(renderConfigurationReference())
  })

  it('documents every declared variable, each with a description', () => {
    const reference = renderConfigurationReference()
    for (const declaration of Object.values(settingsDeclarations)) {
      for (const [name, variable] of Object.entries(declaration.variables)) {
        expect(reference, name).toContain(`| \`${name}\` |`)
        expect(variable.description.length, name).toBeGreaterThan(10)
      }
    }
  })
})
