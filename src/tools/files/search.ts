/**
 * Finding old_text in a file, in time linear in the file. V8's String.prototype.indexOf is fast for
 * ordinary text, but its Boyer-Moore keeps shift tables for the last 250 characters of a pattern only:
 * 30,000 characters of "a" with one "c" in the middle, searched in 8 MB of "a", took 45 s of the event
 * loop. Patterns up to that length go to indexOf; longer ones are found by indexOf on their first
 * characters and checked in place, and once those checks have cost one pass over the file the rest
 * is searched with Knuth-Morris-Pratt, which never looks at a character of the file twice.
 */
const nativeSearchLength = 250
const verificationPasses = 1

export function findText(text: string, search: string, from = 0): number {
  if (search.length <= nativeSearchLength) return text.indexOf(search, from)
  if (text.length - from < search.length) return -1
  const head = search.slice(0, nativeSearchLength)
  let budget = verificationPasses * (text.length - from)
  for (let index = text.indexOf(head, from); index !== -1; index = text.indexOf(head, index + 1)) {
    if (text.startsWith(search, index)) return index
    budget -= search.length
    if (budget < 0) return knuthMorrisPratt(text, search, index + 1)
  }
  return -1
}

export function knuthMorrisPratt(text: string, search: string, from = 0): number {
  const length = search.length
  if (length === 0) return Math.min(from, text.length)
  // failure[i]: length of the longest proper prefix of search[0..i] that is also its suffix.
  const failure = new Int32Array(length)
  for (let index = 1, matched = 0; index < length; index++) {
    const code = search.charCodeAt(index)
    while (matched > 0 && code !== search.charCodeAt(matched)) matched = failure[matched - 1] as number
    if (code === search.charCodeAt(matched)) matched++
    failure[index] = matched
  }
  for (let index = from, matched = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    while (matched > 0 && code !== search.charCodeAt(matched)) matched = failure[matched - 1] as number
    if (code === search.charCodeAt(matched)) matched++
    if (matched === length) return index - length + 1
  }
  return -1
}

export function countOccurrences(text: string, search: string): number {
  let count = 0
  for (let index = findText(text, search); index !== -1; index = findText(text, search, index + search.length)) count++
  return count
}
