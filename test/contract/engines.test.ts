import { readFileSync } from 'node:fs'
import semver from 'semver'
import { describe, expect, it } from 'vitest'

// `npm ci` warns EBADENGINE for any locked package whose engines exclude the running Node: on every Node
// toolport supports (package.json "engines", down to its floor) none may.
const root = new URL('../../', import.meta.url)
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'))
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8'))

describe('engines', () => {
  const floor = semver.minVersion(manifest.engines.node)?.version as string
  it.each([floor, process.versions.node])('every locked package accepts Node %s', (version) => {
    const refused = Object.entries(lock.packages as Record<string, { engines?: { node?: string } }>)
      .filter(([path, entry]) => path !== '' && typeof entry.engines?.node === 'string')
      .filter(([, entry]) => !semver.satisfies(version, entry.engines?.node as string, { includePrerelease: true }))
      .map(([path, entry]) => `${path} wants ${entry.engines?.node}`)
    expect(refused).toEqual([])
  })

  it('the floor is Node 20', () => {
    expect(semver.major(floor)).toBe(20)
  })
})
