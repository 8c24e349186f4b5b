import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import type { Principal } from '../auth/principal'
import type { Tool } from '../tools/tool'
import type { AppEnv } from './env'
import { RestCall } from './rest-call'

const principal = { id: 'key-1', tenant: 'default' } as Principal
const tool = { name: 'read_file' } as Tool

describe('RestCall', () => {
  it("answers the request's own signal from its prototype, with only data properties of its own", async () => {
    const app = new Hono<AppEnv>()
    app.post('/call', async (context) => {
      context.set('linkOrigin', 'http://127.0.0.1:8787')
      const call = new RestCall(context, tool, { path: 'a.txt' }, principal, 'ws', undefined)
      const descriptors = Object.getOwnPropertyDescriptors(call)
      return context.json({
        ownAccessors: Object.keys(descriptors).filter((name) => descriptors[name]?.get !== undefined),
        ownKeys: Object.keys(call).sort(),
        sameSignal: call.signal === context.req.raw.signal,
        origin: call.origin,
        spreadKeepsSignal: 'signal' in { ...call },
      })
    })
    const response = await app.request('/call', { method: 'POST' })
    expect(await response.json()).toEqual({
      ownAccessors: [],
      ownKeys: ['input', 'origin', 'principal', 'tool', 'workspaceId'],
      sameSignal: true,
      origin: 'http://127.0.0.1:8787',
      // Documented: a spread passes its own signal (streamCall does).
      spreadKeepsSignal: false,
    })
  })

  it('carries the disconnect subscription only when the transport has one', async () => {
    const app = new Hono<AppEnv>()
    const subscribe = () => () => {}
    app.post('/call', (context) => {
      const without = new RestCall(context, tool, {}, principal, 'ws', undefined)
      const withIt = new RestCall(context, tool, {}, principal, 'ws', subscribe)
      return context.json({ without: 'onDisconnect' in without, with: withIt.onDisconnect === subscribe })
    })
    const response = await app.request('/call', { method: 'POST' })
    expect(await response.json()).toEqual({ without: false, with: true })
  })
})
