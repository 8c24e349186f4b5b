/** Media types of the files toolport makes or is likely to hand back, by extension. */
const typesByExtension: Record<string, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  json: 'application/json',
  html: 'text/html; charset=utf-8',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  zip: 'application/zip',
}

export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1)
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : ''
}

export function mimeTypeOf(name: string): string {
  return typesByExtension[extensionOf(name)] ?? 'application/octet-stream'
}

export function baseNameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1)
}

/**
 * `attachment` with an ASCII fallback and, when the name is not plain ASCII, an RFC 6266/8187
 * `filename*`. Quotes, backslashes and controls never reach the quoted form, so the header cannot be split.
 */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_') || 'download'
  const header = `attachment; filename="${fallback}"`
  if (fallback === name) return header
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${header}; filename*=UTF-8''${encoded}`
}
