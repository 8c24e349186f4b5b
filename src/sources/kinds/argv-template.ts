import { ToolError } from '../../core/errors'

const placeholder = /\{input\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}/g
const wholePlaceholder = /^\{input\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}$/

/** The fields a template refers to, for checking a manifest against its input_schema. */
export function placeholdersOf(template: readonly string[]): string[] {
  return template.flatMap((element) => [...element.matchAll(placeholder)].map((match) => match[1] as string))
}

/**
 * A command source's argv with the call's input bound in. Every element stays one element: no shell
 * reads the result, so a value is never split, expanded or run. An element that is only a placeholder
 * becomes the value (a list of values becomes that many elements; a missing optional value drops the
 * element); a placeholder inside an element is replaced by the value's text. A value that would reach a
 * program as an option (starting with "-") in an element of its own is refused: argument injection.
 */
export function bindArgv(template: readonly string[], input: Record<string, unknown>): string[] {
  const argv: string[] = []
  for (const element of template) {
    const whole = wholePlaceholder.exec(element)
    if (whole?.[1]) {
      const value = valueAt(input, whole[1])
      if (value === undefined || value === null) continue
      for (const item of Array.isArray(value) ? value : [value]) argv.push(wholeElement(item, whole[1]))
      continue
    }
    let missing = false
    const bound = element.replace(placeholder, (_, field: string) => {
      const value = valueAt(input, field)
      if (value === undefined || value === null) {
        missing = true
        return ''
      }
      return scalarText(value, field)
    })
    if (!missing) argv.push(bound)
  }
  return argv
}

function wholeElement(value: unknown, field: string): string {
  const text = scalarText(value, field)
  if (text.startsWith('-')) {
    throw new ToolError('validation', `${field} may not start with "-": it would reach the program as an option.`, {
      hint: `Give ${field} a value that does not start with "-" (for a file, prefix it with ./).`,
      details: { field },
    })
  }
  return text
}

function scalarText(value: unknown, field: string): string {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) {
      throw new ToolError('validation', `${field} contains a NUL character.`, {
        hint: `Remove NUL characters from ${field}.`,
        details: { field },
      })
    }
    return value
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  throw new ToolError('validation', `${field} is an object or a nested list, which cannot be one program argument.`, {
    hint: `Send ${field} as text, a number or a list of those.`,
    details: { field },
  })
}

function valueAt(input: Record<string, unknown>, path: string): unknown {
  let current: unknown = input
  for (const part of path.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current) || !Object.hasOwn(current, part)) {
      return undefined
    }
    current = (current as Record<string, unknown>)[part]
  }
  return current
}
