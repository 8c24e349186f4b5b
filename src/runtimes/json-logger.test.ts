import { describe, expect, it } from 'vitest'
import { createJsonLogger } from './json-logger'

/** The logger's lines, parsed, from a stream that keeps what it is given. */
function capture() {
  const lines: string[] = []
  const destination = { write: (line: string) => void lines.push(line) }
  return { destination, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>), lines }
}

describe('createJsonLogger', () => {
  it('redacts secret names at the top and one level down, whatever the line', () => {
    const { destination, parsed } = capture()
    const log = createJsonLogger('info', { service: 'toolport' }, destination)
    log.info('top', { authorization: 'Bearer x', key: 'k', api_key: 'a', token: 't', secret: 's', password: 'p' })
    log.warn('nested', { request: { authorization: 'Bearer y', key: 'k2', content: 'c', kept: 1 }, status: 200 })
    log.error('content', { content: 'file text', tool: 'write_file' })
    const [top, nested, content] = parsed()
    for (const name of ['authorization', 'key', 'api_key', 'token', 'secret', 'password']) {
      expect(top?.[name], name).toBe('[redacted]')
    }
    expect(nested?.request).toEqual({ authorization: '[redacted]', key: '[redacted]', content: '[redacted]', kept: 1 })
    expect(nested?.status).toBe(200)
    expect(content).toMatchObject({ content: '[redacted]', tool: 'write_file', level: 'error', msg: 'content' })
  })

  it('writes lines that redaction cannot change as they are, in order with the redacted ones', () => {
    const { destination, parsed, lines } = capture()
    const log = createJsonLogger('info', { service: 'toolport' }, destination)
    const access = { request_id: 'r1', method: 'POST', path: '/v1/tools/read_file', status: 200, duration_ms: 3 }
    log.info('request', access)
    log.info('secret', { token: 't' })
    log.info('request', { ...access, request_id: 'r2', tenant: undefined })
    log.info('bare')
    expect(parsed().map((line) => line.msg)).toEqual(['request', 'secret', 'request', 'bare'])
    expect(parsed()[0]).toEqual({
      level: 'info',
      time: expect.any(String),
      service: 'toolport',
      ...access,
      msg: 'request',
    })
    expect(parsed()[1]?.token).toBe('[redacted]')
    // Field order as pino writes it: level, time, base, the fields, msg.
    expect(lines[2]).toMatch(
      /^\{"level":"info","time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","service":"toolport","request_id":"r2","method":"POST","path":"\/v1\/tools\/read_file","status":200,"duration_ms":3,"msg":"request"\}\n$/,
    )
  })

  it('stamps each line with the time it was written', async () => {
    const { destination, parsed } = capture()
    const log = createJsonLogger('info', {}, destination)
    log.info('first')
    await new Promise((resolve) => setTimeout(resolve, 20))
    log.info('second')
    const [first, second] = parsed().map((line) => Date.parse(line.time as string))
    expect(second as number).toBeGreaterThan(first as number)
    expect(Math.abs((second as number) - Date.now())).toBeLessThan(60_000)
  })
})
