import { describe, expect, it } from 'vitest'
import { countLines, cutToJsonBudget, fitsJsonBudget, jsonLength, splitLines } from './text'

describe('JSON budgets', () => {
  it('fitsJsonBudget agrees with measuring, for the texts that escape longest and around the bound', () => {
    const texts = ['plain text', '\u0000\u001f\u007f', '"\\"\\', '\ud800 lone \udfff', '😀 pair', '\n\t\r', '']
    for (const text of texts) {
      for (let budget = 0; budget <= text.length * 6 + 2; budget++) {
        expect(fitsJsonBudget(text, budget), `${JSON.stringify(text)} in ${budget}`).toBe(jsonLength(text) <= budget)
      }
    }
  })

  it('cutToJsonBudget keeps a text that fits and cuts one that does not, within the budget', () => {
    expect(cutToJsonBudget('\u0001'.repeat(10), 60)).toBe('\u0001'.repeat(10))
    const cut = cutToJsonBudget('\u0001'.repeat(10), 59)
    expect(cut).toBe('\u0001'.repeat(9))
    expect(jsonLength(cut)).toBeLessThanOrEqual(59)
  })
})

describe('countLines', () => {
  it('counts exactly the lines splitLines makes, for every ending and none', () => {
    const texts = ['', 'a', 'a\n', 'a\nb', 'a\nb\n', '\n', '\n\n', 'a\r\nb\r\n', '\r', 'x\n\ny', '😀\n😀']
    for (const text of texts) expect(countLines(text), JSON.stringify(text)).toBe(splitLines(text).length)
  })
})
