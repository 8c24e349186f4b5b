import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countOccurrences, findText, knuthMorrisPratt } from './search'

describe('findText', () => {
  it('finds what indexOf finds, for short and long patterns', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'ab', 'é', '😀'), { maxLength: 80 }).map((parts) => parts.join(''))
    fc.assert(
      fc.property(text, text, fc.nat(20), (haystack, needle, from) => {
        expect(knuthMorrisPratt(haystack, needle, from)).toBe(haystack.indexOf(needle, from))
        const long = needle.repeat(300 / Math.max(1, needle.length) + 1)
        expect(findText(haystack.repeat(40), long, from)).toBe(haystack.repeat(40).indexOf(long, from))
      }),
      { numRuns: 2000 },
    )
  })

  it('finds a long pattern whose start matches everywhere, and counts without overlaps', () => {
    const text = `${'a'.repeat(100_000)}c${'a'.repeat(100_000)}`
    const search = `${'a'.repeat(5_000)}c${'a'.repeat(5_000)}`
    expect(findText(text, search)).toBe(95_000)
    expect(findText('a'.repeat(200_000), search)).toBe(-1)
    expect(countOccurrences('x'.repeat(1_000), 'x'.repeat(300))).toBe(3)
    expect(countOccurrences('abab', 'ab')).toBe(2)
  })
})
