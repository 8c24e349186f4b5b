import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

describe('pdf_generation margins', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({}, { services: { browser: undefined } })
  })
  afterAll(async () => {
    await server.stop()
  })

  /** 600 characters of text as a PDF of the given page setup. */
  const print = (page: Record<string, unknown>) =>
    server.call('pdf_generation', { content_type: 'text', content: 'hello world '.repeat(50), ...page })

  it('refuses margins that leave no room to print, naming the page size', async () => {
    // A5 portrait is 148 × 210 mm: 100 mm on each side leaves nothing (an audit got 500 pages of one character).
    const wide = await print({ page_size: 'A5', margins: { top: 100, left: 100, right: 100, bottom: 100 } })
    expect(wide.status).toBe(400)
    expect(wide.body).toMatchObject({ code: 'validation', field: 'margins' })
    expect(wide.body.hint).toMatch(/A5 portrait is 148 × 210 mm/)
    const tall = await print({
      page_size: 'A4',
      orientation: 'landscape',
      margins: { top: 95, bottom: 95, left: 10, right: 10 },
    })
    expect(tall.status).toBe(400)
  })

  it('accepts generous margins that still leave a printable area', async () => {
    const result = await print({ page_size: 'A5', margins: { top: 60, left: 55, right: 55, bottom: 60 } })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body.pages).toBeLessThan(10)
  })
})
