import { describe, expect, it } from 'vitest'
import {
  canonicalHost,
  type EgressPolicy,
  egressBeyond,
  egressTextSchema,
  formatEgress,
  parseEgress,
  parseEgressEntry,
  patternMatches,
} from './egress-policy'
import { egressPresets } from './egress-presets'

const allow = (...entries: string[]): EgressPolicy => {
  const parsed = parseEgress({ allow: entries })
  if ('problems' in parsed) throw new Error(parsed.problems.join('; '))
  return parsed.policy
}

describe('canonicalHost', () => {
  it('gives one spelling per host, so a list cannot be slipped past by writing it differently', () => {
    expect(canonicalHost('Registry.NPMjs.org.')).toBe('registry.npmjs.org')
    expect(canonicalHost('0x7f.1')).toBe('127.0.0.1')
    expect(canonicalHost('2130706433')).toBe('127.0.0.1')
    expect(canonicalHost('0177.0.0.1')).toBe('127.0.0.1')
    expect(canonicalHost('[::FFFF:127.0.0.1]')).toBe('::ffff:7f00:1')
    expect(canonicalHost('::1')).toBe('::1')
    expect(canonicalHost('bücher.example')).toBe('xn--bcher-kva.example')
  })

  it('refuses what is no host', () => {
    for (const raw of ['', 'a b', 'a/b', 'a@b', 'exa%6dple.org', '[::1', 'a..b', '[zz::1]', 'a\\b', '#x', 'a?b'])
      expect(canonicalHost(raw), raw).toBeUndefined()
  })
})

describe('parseEgressEntry', () => {
  it('reads host, *.host, addresses, ports and presets', () => {
    expect(parseEgressEntry('example.org')).toEqual([{ host: 'example.org', wildcard: false, port: undefined }])
    expect(parseEgressEntry('*.GitHub.com:443')).toEqual([{ host: 'github.com', wildcard: true, port: 443 }])
    expect(parseEgressEntry('[::1]:8080')).toEqual([{ host: '::1', wildcard: false, port: 8080 }])
    expect(parseEgressEntry('10.1.2.3:22')).toEqual([{ host: '10.1.2.3', wildcard: false, port: 22 }])
    expect(parseEgressEntry('@npm')).toEqual([
      { host: 'registry.npmjs.org', wildcard: false, port: 443 },
      { host: 'registry.yarnpkg.com', wildcard: false, port: 443 },
    ])
  })

  it('names what is wrong with a bad entry', () => {
    expect(parseEgressEntry('example.org:0')).toMatch(/port must be 1-65535/)
    expect(parseEgressEntry('example.org:70000')).toMatch(/port must be 1-65535/)
    expect(parseEgressEntry('*.10.0.0.1')).toMatch(/wildcard needs a domain name/)
    expect(parseEgressEntry('@nope')).toMatch(/@nope is not a preset \(presets: @npm, .*@registries\)/)
    expect(parseEgressEntry('a_b..c')).toMatch(/not a host name/)
    expect(parseEgressEntry('host:port:1')).toMatch(/not host\[:port\]/)
  })

  it('keeps every preset entry parseable, and @registries is all of them', () => {
    const everything = parseEgressEntry('@registries')
    expect(Array.isArray(everything)).toBe(true)
    expect((everything as unknown[]).length).toBe(Object.values(egressPresets).flat().length)
  })
})

describe('egressTextSchema', () => {
  it('accepts the three written forms and nothing else', () => {
    for (const good of ['none', 'public', { allow: ['a.example', '@pypi', '*.b.example:443', '[::1]:1'] }])
      expect(egressTextSchema.safeParse(good).success, JSON.stringify(good)).toBe(true)
    for (const bad of [
      'all',
      '',
      { allow: [] },
      { allow: ['a b'] },
      { allow: ['x'], deny: ['y'] },
      { allow: 'x' },
      ['x'],
    ])
      expect(egressTextSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false)
  })
})

describe('matching and narrowing', () => {
  it('matches exact names, names below a wildcard (not the wildcard base) and ports', () => {
    const [exact, wildcard] = [
      (parseEgressEntry('example.org:443') as [never])[0],
      (parseEgressEntry('*.example.org') as [never])[0],
    ]
    expect(patternMatches(exact, 'example.org', 443)).toBe(true)
    expect(patternMatches(exact, 'example.org', 80)).toBe(false)
    expect(patternMatches(exact, 'www.example.org', 443)).toBe(false)
    expect(patternMatches(wildcard, 'a.b.example.org', 80)).toBe(true)
    expect(patternMatches(wildcard, 'example.org', 80)).toBe(false)
    expect(patternMatches(wildcard, 'badexample.org', 80)).toBe(false)
  })

  it('says what a narrower policy asks beyond a wider one', () => {
    const server = allow('*.github.com', 'registry.npmjs.org:443')
    expect(egressBeyond(server, allow('api.github.com:443'))).toBeUndefined()
    expect(egressBeyond(server, allow('*.api.github.com'))).toBeUndefined()
    expect(egressBeyond(server, allow('*.github.com:443'))).toBeUndefined()
    expect(egressBeyond(server, { mode: 'none' })).toBeUndefined()
    expect(egressBeyond(server, allow('github.com'))).toBe('github.com')
    expect(egressBeyond(server, allow('registry.npmjs.org'))).toBe('registry.npmjs.org')
    expect(egressBeyond(server, allow('registry.npmjs.org:80'))).toBe('registry.npmjs.org:80')
    expect(egressBeyond(server, { mode: 'public' })).toBe('public')
    expect(egressBeyond({ mode: 'none' }, allow('a.example'))).toBe('a.example')
    expect(egressBeyond({ mode: 'public' }, allow('a.example'))).toBeUndefined()
    expect(egressBeyond({ mode: 'public' }, { mode: 'public' })).toBeUndefined()
  })

  it('writes a policy back in its written form', () => {
    expect(formatEgress(allow('*.GitHub.com:443', '[::1]', 'a.example'))).toEqual({
      allow: ['*.github.com:443', '[::1]', 'a.example'],
    })
    expect(formatEgress({ mode: 'none' })).toBe('none')
  })
})
