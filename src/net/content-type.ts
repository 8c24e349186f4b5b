/** Media type and charset of a Content-Type header, lower-cased. */
export function parseContentType(header: string | undefined): { mediaType: string; charset: string | undefined } {
  const [type = '', ...parameters] = (header ?? '').split(';')
  const charset = parameters
    .map((parameter) => parameter.trim().split('='))
    .find(([name]) => name?.toLowerCase() === 'charset')?.[1]
  return { mediaType: type.trim().toLowerCase(), charset: charset?.replace(/"/g, '').trim().toLowerCase() }
}

const textual =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-www-form-urlencoded|graphql|yaml|x-yaml|toml|ld\+json|xhtml\+xml)|.*\+(json|xml)$)/

/** Decodes a body as text when it is text; undefined for binary bodies. */
export function decodeTextBody(body: Uint8Array, header: string | undefined): string | undefined {
  const { mediaType, charset } = parseContentType(header)
  const looksBinary = body.subarray(0, 4096).includes(0)
  if (mediaType ? !textual.test(mediaType) || looksBinary : looksBinary) return undefined
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body)
  } catch {
    // An unknown charset label: UTF-8 is the best guess on the web.
    return new TextDecoder('utf-8').decode(body)
  }
}

/** Base64 of bytes with Web APIs only (no Buffer), in chunks to stay under argument limits. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let offset = 0; offset < bytes.length; offset += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000))
  }
  return btoa(binary)
}
