import { cutToJsonBudget } from '../tools/files/text'

/** A preview as a response carries it: cut to fit, and then saying so. */
export interface FittedPreview {
  preview: unknown
  truncated?: true
  hint?: string
}

// Room kept for the members around `preview` (title, ids, URLs).
const responseOverhead = 2_000

/**
 * Cuts a dry run's preview (a diff of a whole file can be megabytes) or an approval card's { title, input }
 * to the response limit, like every tool's output: the text that fits, `truncated: true` and a hint. A
 * preview that is not text is cut as its JSON text.
 */
export function fitPreview(preview: unknown, maxResponseChars: number): FittedPreview {
  const budget = Math.max(0, maxResponseChars - responseOverhead)
  const json = JSON.stringify(preview) ?? ''
  if (json.length <= budget) return { preview }
  const text = typeof preview === 'string' ? preview : json
  return {
    preview: cutToJsonBudget(text, budget),
    truncated: true,
    hint: `The preview was cut at ${budget.toLocaleString('en-US')} characters; the call itself is not: to see every change, split it into smaller edits and preview each.`,
  }
}
