/**
 * Docx, pptx and xlsx files are XML, and XML 1.0 cannot hold every character a JSON string can:
 * its Char production is #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
 * Not even as a character reference. The writers do not guard it (pptxgenjs passes C0 controls through;
 * docx and exceljs drop C0 controls but keep U+FFFE, U+FFFF and lone surrogates), and Word, PowerPoint
 * and Excel call a file holding one corrupt. So every user string loses those characters before it
 * reaches a writer. Tab, LF and CR stay; a valid surrogate pair (an emoji) is one code point under the
 * `u` flag and stays too, while a lone surrogate is matched and removed.
 */
const notXmlChars = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu
// Code units that may start a character XML cannot hold (a surrogate may also be half of a valid
// pair): a plain character class, several times faster than the exact `u` test, and false for
// nearly all text, which then comes back as it is, uncopied.
const suspect = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff]/

/** Text without the characters XML 1.0 cannot hold. */
export function xmlText(text: string): string {
  return suspect.test(text) ? text.replace(notXmlChars, '') : text
}

/** A row of cells with its strings through xmlText: the same array when none changes. */
export function xmlRow<T>(cells: readonly T[]): readonly T[] {
  let copy: T[] | undefined
  for (let index = 0; index < cells.length; index++) {
    const cell = cells[index]
    if (typeof cell !== 'string' || !suspect.test(cell)) continue
    copy ??= cells.slice()
    copy[index] = xmlText(cell) as T
  }
  return copy ?? cells
}

/**
 * A renderer's input (strings, arrays, plain objects) with every string through xmlText. What is clean
 * comes back as the same object, so a clean 100,000-row sheet is walked once and never copied. Other
 * objects (a Set of row indexes) are kept as they are.
 */
export function xmlSafe<T>(value: T): T {
  if (typeof value === 'string') return xmlText(value) as T
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let index = 0; index < value.length; index++) {
      const item = value[index]
      const safe = xmlSafe(item)
      if (safe !== item) {
        copy ??= value.slice()
        copy[index] = safe
      }
    }
    return (copy ?? value) as T
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let copy: Record<string, unknown> | undefined
    for (const [key, item] of Object.entries(value)) {
      const safe = xmlSafe(item)
      if (safe !== item) {
        copy ??= { ...(value as Record<string, unknown>) }
        copy[key] = safe
      }
    }
    return (copy ?? value) as T
  }
  return value
}
