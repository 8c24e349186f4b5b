import { ToolError } from '../core/errors'

/**
 * The most pixels one embedded image may decode to: a 20,000 × 20,000 PNG of zeros is 1.5 MB of
 * base64 and took 1.7 GB and 25 s to render. 50 megapixels (200 MB decoded) is far more than a printed
 * page needs (A4 at 300 dpi is 8.7).
 */
export const maxImagePixels = 50_000_000

// Raster images Chromium decodes to a bitmap of their own size; SVG is drawn at its layout size.
const embedded = /data:image\/(png|jpeg|jpg|gif|webp|bmp);base64,([A-Za-z0-9+/=\s]+)/gi

/**
 * Refuses a document whose embedded (data: URI) images would decode to more than maxImagePixels, by
 * the dimensions their headers declare, before a browser decodes them. Images whose header cannot be
 * read are left to the browser, which draws nothing for them. image-size loads only for a document
 * that embeds an image: the tools that call this are in every start's bundle, most documents embed none.
 */
export async function assertEmbeddedImagesFit(text: string, field: string): Promise<void> {
  if (!text.includes('data:image/')) return
  const { imageSize } = await import('image-size')
  for (const match of text.matchAll(embedded)) {
    const bytes = Buffer.from((match[2] ?? '').replace(/\s+/g, ''), 'base64')
    let size: { width?: number | undefined; height?: number | undefined }
    try {
      size = imageSize(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    } catch {
      continue
    }
    const pixels = (size.width ?? 0) * (size.height ?? 0)
    if (pixels > maxImagePixels) {
      throw new ToolError(
        'validation',
        `An embedded ${match[1]?.toLowerCase()} image is ${size.width} × ${size.height} pixels; at most ${maxImagePixels.toLocaleString('en-US')} pixels are rendered.`,
        {
          hint: 'Scale the image down (a printed page needs about 2,500 × 3,500 pixels at most) and send it again.',
          details: { field },
        },
      )
    }
  }
}
