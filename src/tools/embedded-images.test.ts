import { describe, expect, it } from 'vitest'
import { ToolError } from '../core/errors'
import { assertEmbeddedImagesFit } from './embedded-images'

/** The header of a PNG that declares width × height (image-size reads no further). */
function pngHeader(width: number, height: number): string {
  const bytes = Buffer.alloc(33)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0)
  bytes.writeUInt32BE(13, 8)
  bytes.write('IHDR', 12, 'latin1')
  bytes.writeUInt32BE(width, 16)
  bytes.writeUInt32BE(height, 20)
  bytes.set([8, 6, 0, 0, 0], 24)
  return bytes.toString('base64')
}

/** A GIF header declaring width × height. */
function gifHeader(width: number, height: number): string {
  const bytes = Buffer.alloc(13)
  bytes.write('GIF89a', 0, 'latin1')
  bytes.writeUInt16LE(width, 6)
  bytes.writeUInt16LE(height, 8)
  return bytes.toString('base64')
}

const fits = async (text: string) => {
  try {
    await assertEmbeddedImagesFit(text, 'content')
    return true
  } catch (error) {
    if (!(error instanceof ToolError)) throw error
    expect(error).toMatchObject({ code: 'validation', details: { field: 'content' } })
    return false
  }
}

describe('embedded images', () => {
  it('refuses a data: image whose header declares more than 50 megapixels, in Markdown, HTML and CSS', async () => {
    const bomb = `data:image/png;base64,${pngHeader(20_000, 20_000)}`
    expect(await fits(`# Report\n\n![chart](${bomb})`)).toBe(false)
    expect(await fits(`<p><img src="${bomb}"></p>`)).toBe(false)
    expect(await fits(`<div style="background:url('${bomb.replace('png', 'PNG')}')"></div>`)).toBe(false)
    expect(await fits(`<img src="data:image/gif;base64,${gifHeader(65_535, 65_535)}">`)).toBe(false)
  })

  it('takes images a page needs, base64 wrapped over lines, and leaves unreadable ones to the browser', async () => {
    expect(await fits(`![a](data:image/png;base64,${pngHeader(2_480, 3_508)})`)).toBe(true)
    expect(await fits(`<img src="data:image/png;base64,${pngHeader(7_000, 7_000).replace(/(.{8})/g, '$1\n')}">`)).toBe(
      true,
    )
    expect(await fits('<img src="data:image/png;base64,bm90IGFuIGltYWdl">')).toBe(true)
    expect(await fits('no images at all')).toBe(true)
  })
})
