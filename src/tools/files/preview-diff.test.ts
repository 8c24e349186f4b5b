import { applyPatch } from 'diff'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { unifiedDiff, wholeChangeDiff } from './preview-diff'

const lines = (count: number, text: (index: number) => string) =>
  `${Array.from({ length: count }, (_, index) => text(index)).join('\n')}\n`

describe('dry-run diffs', () => {
  it('gives the smallest diff for a few changes', () => {
    const before = lines(100, (index) => `line ${index}`)
    const after = before.replace('line 50\n', 'line fifty\n')
    const diff = unifiedDiff('f.txt', before, after)
    expect(diff).toContain('@@ -47,9 +47,9 @@')
    expect(diff.match(/^[-+][^-+]/gm)).toEqual(['-l', '+l'])
    expect(applyPatch(before, diff)).toBe(after)
  })

  it('falls back to one hunk from the first to the last change when thousands of lines change', () => {
    const before = lines(20_000, (index) => `line ${index} of the old file`)
    const after = `kept\n${lines(20_000, (index) => `row ${index} of the new file`)}`
    const diff = unifiedDiff('f.txt', `kept\n${before}`, after)
    expect(diff.split('\n').filter((line) => line.startsWith('@@'))).toEqual(['@@ -1,20001 +1,20001 @@'])
    expect(applyPatch(`kept\n${before}`, diff)).toBe(after)
  })

  it('a file of a million lines gets the one-hunk diff at once, and only as much of it as maxChars asks', () => {
    const before = lines(600_000, (index) => `l${index}`)
    const after = lines(600_000, (index) => (index % 2 ? `l${index}` : `z${index}`))
    const diff = unifiedDiff('big.txt', before, after, false, 10_000)
    // The header counts the whole change; the lines stop soon after the budget.
    expect(diff.split('\n').filter((line) => line.startsWith('@@'))).toEqual(['@@ -1,600000 +1,600000 @@'])
    expect(diff.length).toBeGreaterThan(10_000)
    expect(diff.length).toBeLessThan(10_300)
    // Without a budget the same call is the whole patch, which turns one text into the other.
    const small = lines(60_000, (index) => `l${index}`)
    const changed = small.replace('l30000\n', 'changed\n')
    expect(applyPatch(small, unifiedDiff('f.txt', small, changed))).toBe(changed)
  })

  it('writes a one-hunk diff that always turns the old text into the new one', () => {
    const text = fc
      .array(fc.constantFrom('a\n', 'b\n', 'c', '\r\n', 'd\r\n', '\n'), { maxLength: 10 })
      .map((parts) => parts.join(''))
    fc.assert(
      fc.property(text, text, (before, after) => {
        expect(applyPatch(before, wholeChangeDiff('a/f', 'b/f', before, after))).toBe(after)
      }),
      { numRuns: 5000 },
    )
  })
})
