/**
 * Text a source gives its tools (titles, descriptions, property names) is published to every platform
 * in the tenant's tool list. A control character or a lone surrogate in one of them can make a platform
 * refuse the whole list, and bidirectional overrides can show a model or a person other text than the
 * one sent. Manifests are refused for them (the tenant can fix the manifest); text from an upstream (an
 * MCP server, an OpenAPI document) is cleaned, since the tenant cannot fix it.
 */

// C0 controls but tab, line feed and carriage return; DEL and C1; bidirectional embeddings, overrides
// and isolates; and a lone surrogate of either half.
const unpublishable =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u
const unpublishableAll = new RegExp(unpublishable.source, 'gu')
const lineBreaks = /[\t\n\r]/
const lineBreaksAndUnpublishable = new RegExp(`${unpublishable.source}|[\\t\\n\\r]`, 'gu')
const lineBreaksAll = /[\t\n\r]+/g

export type TextKind = 'line' | 'text'

const codePoint = (character: string) => (character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')

/** The first character a platform may refuse, as U+XXXX; tab and line breaks only where `kind` is 'line'. */
export function unpublishableCharacter(text: string, kind: TextKind): string | undefined {
  const found = unpublishable.exec(text)?.[0] ?? (kind === 'line' ? lineBreaks.exec(text)?.[0] : undefined)
  return found === undefined ? undefined : `U+${codePoint(found)}`
}

/** The text without what unpublishableCharacter finds; a line's tabs and line breaks become one space. */
export function publishable(text: string, kind: TextKind): string {
  const cleaned = text.replace(unpublishableAll, '')
  return kind === 'line' ? cleaned.replace(lineBreaksAll, ' ') : cleaned
}

/** The text with each character unpublishableCharacter finds in a line spelled \uXXXX, so an error can name it. */
export function escapedUnpublishable(text: string): string {
  return text.replace(lineBreaksAndUnpublishable, (character) => `\\u${codePoint(character)}`)
}
