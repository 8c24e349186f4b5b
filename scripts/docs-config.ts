// Writes docs/configuration.md from the settings declarations; a test fails when the committed copy is stale.
import { writeFile } from 'node:fs/promises'
import { renderConfigurationReference } from '../src/config/reference'

await writeFile('docs/configuration.md', renderConfigurationReference())
console.log('wrote docs/configuration.md')
