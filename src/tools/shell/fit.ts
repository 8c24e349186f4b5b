import { cutToJsonBudget, jsonLength } from '../files/text'

/**
 * Shares a character budget among several texts, water-filling: short texts keep everything and
 * their unused share goes to the long ones. A cut text keeps its head and its tail.
 */
export function fitTexts(texts: readonly string[], budget: number): { texts: string[]; cut: boolean } {
  const lengths = texts.map(jsonLength)
  const order = texts.map((_, index) => index).sort((a, b) => (lengths[a] as number) - (lengths[b] as number))
  const allowance = new Array<number>(texts.length).fill(0)
  let remaining = Math.max(0, budget)
  order.forEach((index, position) => {
    const share = Math.floor(remaining / (order.length - position))
    allowance[index] = Math.min(lengths[index] as number, share)
    remaining -= allowance[index] as number
  })
  let cut = false
  const fitted = texts.map((text, index) => {
    const limit = allowance[index] as number
    if ((lengths[index] as number) <= limit) return text
    cut = true
    return cutMiddle(text, limit)
  })
  return { texts: fitted, cut }
}

const marker = '\n[… cut to fit the response …]\n'

function cutMiddle(text: string, budget: number): string {
  const room = budget - jsonLength(marker)
  if (room <= 0) return cutToJsonBudget(text, Math.max(0, budget))
  const head = cutToJsonBudget(text, Math.floor(room / 2))
  const reversed = cutToJsonBudget(reverse(text), room - jsonLength(head))
  return head + marker + reverse(reversed)
}

/** Reverses by code points so surrogate pairs stay whole. */
function reverse(text: string): string {
  return Array.from(text).reverse().join('')
}
