import { describe, expect, it } from 'vitest'
import { isValidIdentifier, normalizeWorkspacePath } from './paths'

describe('normalizeWorkspacePath', () => {
  it('canonicalizes harmless forms', () => {
    expect(normalizeWorkspacePath('./a//b/')).toBe('a/b')
    expect(normalizeWorkspacePath('a/./b')).toBe('a/b')
    expect(normalizeWorkspacePath('ü/日本.txt')).toBe('ü/日本.txt')
    expect(normalizeWorkspacePath('', { allowRoot: true })).toBe('')
    expect(normalizeWorkspacePath('./', { allowRoot: true })).toBe('')
  })

  it('refuses what could climb out or confuse a later layer', () => {
    for (const path of [
      '..',
      'a/../b',
      '/abs',
      'a\\b',
      'a\u0000',
      'a\nb',
      '%2e%2e/x',
      '\u2025/x',
      '\uff0e\uff0e/x',
      'C:x',
      '~/x',
      '...',
      '',
      ' ',
      '\ud800',
      'a/\udbff.txt',
      'x\udc00y',
    ]) {
      expect(() => normalizeWorkspacePath(path), JSON.stringify(path)).toThrow(/Invalid path/)
    }
    expect(() => normalizeWorkspacePath(42)).toThrow(/not a string/)
    // Paired surrogates are ordinary characters.
    expect(normalizeWorkspacePath('emoji 😀/𝄞.txt')).toBe('emoji 😀/𝄞.txt')
  })

  it('limits segment and total length in bytes', () => {
    expect(normalizeWorkspacePath('é'.repeat(127))).toHaveLength(127)
    expect(() => normalizeWorkspacePath('é'.repeat(128))).toThrow(/255 bytes/)
    expect(() => normalizeWorkspacePath('abcdefgh/'.repeat(90))).toThrow(/768 bytes/)
  })
})

describe('isValidIdentifier', () => {
  it('accepts [A-Za-z0-9._-]{1,64} except dot-only names', () => {
    expect(isValidIdentifier('team-1.dev_x')).toBe(true)
    for (const id of ['', '.', '..', '...', 'a/b', 'a b', 'x'.repeat(65), 'é'])
      expect(isValidIdentifier(id), id).toBe(false)
  })
})
