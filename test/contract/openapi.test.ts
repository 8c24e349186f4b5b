import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { renderCommittedOpenApi } from '../../src/runtimes/committed-openapi'

describe('openapi/openapi.json', () => {
  it('is current: regenerate it with `npm run openapi` when this fails', async () => {
    const committed = await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')
    expect(committed).toBe(await renderCommittedOpenApi())
  })
})
