import { describe, expect, it } from 'vitest'
import { createIntrospector, createLru } from './introspection'

const issuer = 'https://idp.example.test'
const resource = 'https://toolport.example.test'

/** An introspector over a fake endpoint that counts its requests; `answer` may be changed by a test. */
function setup(options: { cacheSize?: number; answer?: Record<string, unknown> } = {}) {
  let clock = 1_000_000_000_000
  const seen: Array<{ authorization: string | null; body: string }> = []
  const state = {
    answer: options.answer ?? { active: true, iss: issuer, aud: [resource], exp: clock / 1000 + 3600 },
  }
  const introspector = createIntrospector({
    issuer,
    client: { clientId: 'toolport', clientSecret: 's3cret value' },
    audiences: [resource],
    clockSkewSeconds: 30,
    endpoint: async () => `${issuer}/introspect`,
    cacheSize: options.cacheSize ?? 10,
    now: () => clock,
    fetch: async (_input, init) => {
      seen.push({ authorization: new Headers(init?.headers).get('authorization'), body: String(init?.body) })
      return Response.json(state.answer)
    },
  })
  return { introspector, seen, state, advance: (ms: number) => (clock += ms), now: () => clock }
}

describe('token introspection', () => {
  it('asks with client_secret_basic, the token and the access-token hint', async () => {
    const { introspector, seen } = setup()
    await introspector.claims('opaque-1')
    expect(seen).toEqual([
      {
        authorization: `Basic ${btoa('toolport:s3cret+value')}`,
        body: 'token=opaque-1&token_type_hint=access_token',
      },
    ])
  })

  it('reuses an active answer for at most 60 s, and never past the token’s exp', async () => {
    const { introspector, seen, state, advance, now } = setup()
    await introspector.claims('opaque-1')
    advance(59_000)
    await introspector.claims('opaque-1')
    expect(seen).toHaveLength(1)
    advance(2_000)
    await introspector.claims('opaque-1')
    expect(seen).toHaveLength(2)

    state.answer = { active: true, aud: resource, exp: Math.floor(now() / 1000) + 10 }
    await introspector.claims('opaque-2')
    advance(11_000)
    // Past exp the issuer is asked again (and the skew still lets this answer pass).
    await introspector.claims('opaque-2')
    expect(seen).toHaveLength(4)
  })

  it('never caches a refusal: an inactive answer is asked again', async () => {
    const { introspector, seen } = setup({ answer: { active: false } })
    await expect(introspector.claims('revoked')).rejects.toMatchObject({ code: 'unauthenticated' })
    await expect(introspector.claims('revoked')).rejects.toMatchObject({ code: 'unauthenticated' })
    expect(seen).toHaveLength(2)
  })

  it('refuses another issuer, another audience, no audience and an expired answer', async () => {
    for (const [answer, reason] of [
      [{ active: true, iss: 'https://evil.example.test', aud: resource }, /another issuer/],
      [{ active: true, aud: ['https://other.example.test'] }, /another resource/],
      [{ active: true }, /another resource/],
      [{ active: true, aud: resource, exp: 1 }, /expired/],
    ] as const) {
      const { introspector } = setup({ answer })
      await expect(introspector.claims('opaque')).rejects.toThrow(reason)
    }
  })

  it('keeps at most cacheSize answers, dropping the least recently used', async () => {
    const { introspector, seen } = setup({ cacheSize: 2 })
    await introspector.claims('a')
    await introspector.claims('b')
    await introspector.claims('a') // a is now the most recent
    await introspector.claims('c') // drops b
    expect(seen).toHaveLength(3)
    await introspector.claims('a')
    expect(seen).toHaveLength(3)
    await introspector.claims('b')
    expect(seen).toHaveLength(4)
  })

  it('the LRU is bounded', () => {
    const lru = createLru<number>(3)
    for (let index = 0; index < 100; index++) lru.set(`key-${index}`, { value: index, until: 0 })
    expect(lru.size).toBe(3)
    expect(lru.get('key-99')?.value).toBe(99)
    expect(lru.get('key-96')).toBeUndefined()
  })
})
