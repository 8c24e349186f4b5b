import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeDisconnect } from './node-bindings'

describe('nodeDisconnect over real HTTP', () => {
  const heard: string[] = []
  const release = new Map<string, () => void>()
  let server: ReturnType<typeof serve>
  let url = ''
  beforeAll(async () => {
    const app = new Hono()
    app.get('/wait/:id', async (context) => {
      const id = context.req.param('id')
      const subscribe = nodeDisconnect(context)
      if (!subscribe) return context.text('no bindings', 500)
      subscribe(() => heard.push(id))
      await new Promise<void>((resolve) => release.set(id, resolve))
      return context.text(`done ${id}`)
    })
    app.get('/in-process', (context) => context.text(String(nodeDisconnect(context) === undefined)))
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((resolve) => server.once('listening', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    // The same app in process has no Node bindings: the caller falls back to the request's signal.
    expect(await (await app.request('/in-process')).text()).toBe('true')
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const until = async (done: () => boolean) => {
    for (let round = 0; round < 200 && !done(); round++) await new Promise((resolve) => setTimeout(resolve, 10))
  }

  it('hears a client that goes away before its answer, and not one that got it', async () => {
    const controller = new AbortController()
    const gone = fetch(`${url}/wait/gone`, { signal: controller.signal }).catch(() => 'aborted')
    await until(() => release.has('gone'))
    controller.abort()
    expect(await gone).toBe('aborted')
    await until(() => heard.includes('gone'))
    expect(heard).toEqual(['gone'])
    release.get('gone')?.()

    const answered = fetch(`${url}/wait/answered`).then((response) => response.text())
    await until(() => release.has('answered'))
    release.get('answered')?.()
    expect(await answered).toBe('done answered')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(heard).toEqual(['gone'])
  })
})
