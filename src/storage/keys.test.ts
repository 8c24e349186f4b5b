import { describe, expect, it } from 'vitest'
import { assertValidKey, assertValidPrefix, isValidKey } from './keys'

describe('storage key rules', () => {
  it('accepts plain and unusual keys alike, up to 1,024 bytes of UTF-8', () => {
    const valid = [
      'a',
      'a/b.txt',
      'dir/.hidden',
      'x-y_z/..a/b..',
      'ü/ß.txt',
      'with space/x',
      'é'.repeat(512),
      'x'.repeat(1024),
    ]
    for (const key of valid) expect(isValidKey(key), key).toBe(true)
  })

  it('refuses what could escape or alias a file, whatever its shape', () => {
    const invalid = [
      '',
      '/a',
      'a/',
      'a//b',
      'a/./b',
      'a/../b',
      '..',
      '.',
      'a/..',
      'a\\b',
      'a\u0000b',
      'a\u007fb',
      'a\u0085b',
      '\ud800',
      'x'.repeat(1025),
      'é'.repeat(513),
    ]
    for (const key of invalid) expect(isValidKey(key), JSON.stringify(key)).toBe(false)
    expect(() => assertValidKey('a/../b')).toThrow(/\. or \.\. segment/)
    expect(() => assertValidKey('x'.repeat(1025))).toThrow(/longer than 1024 bytes/)
  })

  it('lets a prefix be empty or end with a slash, and nothing else the key rules refuse', () => {
    for (const prefix of ['', 'a/', 'a/b/', 'a/b', '.hidden/'])
      expect(() => assertValidPrefix(prefix), prefix).not.toThrow()
    for (const prefix of ['/', '//', 'a//', '../', 'a/../', 'a\\/']) {
      expect(() => assertValidPrefix(prefix), prefix).toThrow(/Invalid storage prefix/)
    }
  })
})
