import { describe, expect, it } from 'vitest'
import { parseKeysFile } from '../auth/keys'
import { isLoopbackHost } from '../core/loopback'
import { ConfigError } from '../core/settings'
import { toolNames } from '../tools/builtins'
import { loadConfig } from './config'

const load = (env: Record<string, string>) => loadConfig(env, { toolNames })

describe('loadConfig', () => {
  it('has embedded defaults for a local start', () => {
    const config = load({})
    expect(config).toMatchObject({
      http: { port: 8787, host: '127.0.0.1', publicUrl: 'http://127.0.0.1:8787' },
      storage: { dataDir: './.toolport-data', driver: 'fs' },
      apiKeys: [],
      sources: { enabled: undefined },
      calls: { maxFileBytes: 10 * 1024 * 1024, maxResponseChars: 100_000 },
    })
  })

  it('fails at start on an unknown tool in TOOLPORT_TOOLS, naming it', () => {
    expect(() => load({ TOOLPORT_TOOLS: 'read_file,rm_rf' })).toThrow(/unknown tool rm_rf/)
    expect(() => load({ TOOLPORT_TOOLS: ' , ' })).toThrow(ConfigError)
    expect(load({ TOOLPORT_TOOLS: 'read_file, list_files' }).sources.enabled).toEqual(['read_file', 'list_files'])
  })

  it('names the variable of a bad value', () => {
    expect(() => load({ PORT: 'eighty' })).toThrow(/PORT/)
    expect(() => load({ PORT: '70000' })).toThrow(/PORT/)
    expect(() => load({ TOOLPORT_STORAGE: 'ftp' })).toThrow(/TOOLPORT_STORAGE/)
    expect(() => load({ TOOLPORT_MAX_FILE_BYTES: '-1' })).toThrow(/TOOLPORT_MAX_FILE_BYTES/)
    expect(() => load({ TOOLPORT_PUBLIC_URL: 'javascript:alert(1)' })).toThrow(/TOOLPORT_PUBLIC_URL/)
    expect(() => load({ TOOLPORT_S3_FORCE_PATH_STYLE: 'maybe' })).toThrow(/TOOLPORT_S3_FORCE_PATH_STYLE/)
    expect(() => load({ TOOLPORT_STORAGE: 's3' })).toThrow(/TOOLPORT_S3_BUCKET/)
  })

  it('parses tenant=key lists; a bare key belongs to tenant default', () => {
    const config = load({ TOOLPORT_API_KEYS: 'acme=key-acme-0123456789ab, key-default-0123456789' })
    expect(config.apiKeys).toEqual([
      { tenant: 'acme', key: 'key-acme-0123456789ab' },
      { tenant: 'default', key: 'key-default-0123456789' },
    ])
  })

  it('refuses weak, duplicate and badly named keys', () => {
    expect(() => load({ TOOLPORT_API_KEYS: 'short' })).toThrow(/at least 16/)
    expect(() => load({ TOOLPORT_API_KEYS: '../x=key-0123456789abcdef' })).toThrow(/tenant/)
    expect(() => load({ TOOLPORT_API_KEYS: 'a=key-0123456789abcdef,b=key-0123456789abcdef' })).toThrow(/twice/)
  })

  it('refuses to serve a non-loopback address without keys', () => {
    expect(() => load({ HOST: '0.0.0.0' })).toThrow(/loopback/)
    expect(() => load({ HOST: '::' })).toThrow(/loopback/)
    expect(load({ HOST: '0.0.0.0', TOOLPORT_API_KEYS: 'key-0123456789abcdef' }).http.host).toBe('0.0.0.0')
    expect(load({ HOST: '::1' }).http.publicUrl).toBe('http://[::1]:8787')
  })

  it('configures S3 with region and path style', () => {
    const config = load({
      TOOLPORT_STORAGE: 's3',
      TOOLPORT_S3_BUCKET: 'my-bucket',
      TOOLPORT_S3_ENDPOINT: 'http://127.0.0.1:9000',
      TOOLPORT_S3_FORCE_PATH_STYLE: 'true',
    })
    expect(config.storage.s3).toEqual({
      bucket: 'my-bucket',
      endpoint: 'http://127.0.0.1:9000',
      region: 'us-east-1',
      forcePathStyle: true,
    })
  })

  it('takes an introspection client only whole and only for an external issuer', () => {
    const external = {
      TOOLPORT_PUBLIC_URL: 'https://tools.example.test',
      TOOLPORT_OAUTH_ISSUER: 'https://idp.example.test',
    }
    const client = {
      TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID: 'toolport',
      TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET: 'introspection-secret',
    }
    expect(load({ ...external, ...client }).oauth.introspection).toEqual({
      clientId: 'toolport',
      clientSecret: 'introspection-secret',
    })
    expect(load(external).oauth.introspection).toBeUndefined()
    expect(() => load({ ...external, TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID: 'toolport' })).toThrow(
      /TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET go together: the secret is missing/,
    )
    expect(() => load({ ...external, TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET: 'introspection-secret' })).toThrow(
      /go together: the client id is missing/,
    )
    expect(() =>
      load({ ...external, ...client, TOOLPORT_OAUTH_ISSUER: 'builtin', TOOLPORT_API_KEYS: `acme=${'k'.repeat(20)}` }),
    ).toThrow(/needs an external TOOLPORT_OAUTH_ISSUER \(the built-in server/)
    expect(() => load(client)).toThrow(/needs an external TOOLPORT_OAUTH_ISSUER \(none is set/)
  })
})

describe('parseKeysFile', () => {
  it('reads keys limited to tools and checks the tool names at load', () => {
    const keys = parseKeysFile(JSON.stringify([{ tenant: 't1', key: 'k'.repeat(20), tools: ['read_file'] }]))
    expect(keys).toEqual([{ tenant: 't1', key: 'k'.repeat(20), tools: ['read_file'] }])
    expect(() =>
      loadConfig({}, { toolNames, fileKeys: [{ tenant: 't', key: 'k'.repeat(20), tools: ['nope'] }] }),
    ).toThrow(/unknown tool nope/)
  })

  it('refuses the tenant name the audit log keeps for refusals that name no tenant', () => {
    expect(() => parseKeysFile(JSON.stringify([{ tenant: '_service', key: 'k'.repeat(20), admin: true }]))).toThrow(
      /_service is reserved/,
    )
  })

  it('explains malformed files', () => {
    expect(() => parseKeysFile('{')).toThrow(/not valid JSON/)
    expect(() => parseKeysFile('[{"tenant":"t"}]')).toThrow(/key/)
  })

  it('reads approver keys, and refuses a key that would approve its own calls', () => {
    const key = 'k'.repeat(20)
    expect(parseKeysFile(JSON.stringify([{ tenant: 't', key, approver: true }]))).toEqual([
      { tenant: 't', key, approver: true },
    ])
    expect(() => parseKeysFile(JSON.stringify([{ tenant: 't', key, approver: 'yes' }]))).toThrow(/approver/)
    expect(() =>
      parseKeysFile(JSON.stringify([{ tenant: 't', key, approver: true, require_approval: ['write'] }])),
    ).toThrow(/0\.approver: a key cannot both need approval and give it/)
    // An empty require_approval gates nothing, so such a key may approve.
    expect(parseKeysFile(JSON.stringify([{ tenant: 't', key, approver: true, require_approval: [] }]))).toHaveLength(1)
  })
})

describe('shell egress settings', () => {
  const key = 'k'.repeat(20)
  const withKeys = (env: Record<string, string>, keys: unknown[]) =>
    loadConfig(env, { toolNames, fileKeys: parseKeysFile(JSON.stringify(keys)) })

  it('is none unless the operator opens it, and reads allow-lists with presets', () => {
    expect(load({}).egress.policy).toEqual({ mode: 'none' })
    expect(load({ TOOLPORT_SHELL_EGRESS: 'public' }).egress.policy).toEqual({ mode: 'public' })
    const config = load({ TOOLPORT_SHELL_EGRESS: 'allow', TOOLPORT_SHELL_EGRESS_ALLOW: '@pypi, *.corp.example:443' })
    expect(config.egress.policy).toEqual({
      mode: 'allow',
      allow: [
        { host: 'pypi.org', wildcard: false, port: 443 },
        { host: 'files.pythonhosted.org', wildcard: false, port: 443 },
        { host: 'corp.example', wildcard: true, port: 443 },
      ],
    })
    expect(config.egress.limits).toEqual({
      connections: 256,
      bytesIn: 1024 * 1024 * 1024,
      bytesOut: 256 * 1024 * 1024,
      connectionSeconds: 600,
    })
  })

  it('refuses settings that do not fit together, naming the variable', () => {
    expect(() => load({ TOOLPORT_SHELL_EGRESS: 'allow' })).toThrow(/needs TOOLPORT_SHELL_EGRESS_ALLOW/)
    expect(() => load({ TOOLPORT_SHELL_EGRESS_ALLOW: 'a.example' })).toThrow(/set TOOLPORT_SHELL_EGRESS=allow/)
    expect(() => load({ TOOLPORT_SHELL_EGRESS: 'allow', TOOLPORT_SHELL_EGRESS_ALLOW: 'a b' })).toThrow(
      /TOOLPORT_SHELL_EGRESS_ALLOW: not a host pattern: a b/,
    )
    expect(() => load({ TOOLPORT_SHELL_EGRESS: 'allow', TOOLPORT_SHELL_EGRESS_ALLOW: '@nope' })).toThrow(
      /@nope is not a preset/,
    )
    expect(() => load({ TOOLPORT_SHELL_EGRESS: 'everything' })).toThrow(/TOOLPORT_SHELL_EGRESS/)
    expect(() =>
      load({
        TOOLPORT_SHELL_EGRESS: 'public',
        TOOLPORT_SANDBOX: 'container',
        TOOLPORT_CONTAINER_IMAGE: 'python:3.12',
        TOOLPORT_CONTAINER_NETWORK: 'bridge',
      }),
    ).toThrow(/needs TOOLPORT_CONTAINER_NETWORK=none/)
    expect(() => load({ TOOLPORT_SHELL_EGRESS: 'public', TOOLPORT_SANDBOX: 'process' })).toThrow(
      /cannot be enforced with TOOLPORT_SANDBOX=process/,
    )
  })

  it('lets a key narrow the server policy, never widen it', () => {
    const server = { TOOLPORT_SHELL_EGRESS: 'allow', TOOLPORT_SHELL_EGRESS_ALLOW: '*.example.org:443' }
    const narrow = withKeys(server, [{ tenant: 't', key, egress: { allow: ['api.example.org:443'] } }])
    expect(narrow.apiKeys[0]?.egress).toEqual({
      mode: 'allow',
      allow: [{ host: 'api.example.org', wildcard: false, port: 443 }],
    })
    expect(() => withKeys(server, [{ tenant: 't', key, egress: 'public' }])).toThrow(
      /key of tenant t: egress public is beyond TOOLPORT_SHELL_EGRESS=allow/,
    )
    expect(() => withKeys(server, [{ tenant: 't', key, egress: { allow: ['example.org:443'] } }])).toThrow(
      /egress example.org:443 is beyond/,
    )
    expect(() => withKeys({}, [{ tenant: 't', key, egress: { allow: ['a.example'] } }])).toThrow(
      /beyond TOOLPORT_SHELL_EGRESS=none/,
    )
    expect(withKeys({}, [{ tenant: 't', key, egress: 'none' }]).apiKeys[0]?.egress).toEqual({ mode: 'none' })
  })

  it('refuses a keys-file entry with a field it does not know, so a misspelt egress cannot widen a key', () => {
    expect(() => parseKeysFile(JSON.stringify([{ tenant: 't', key, egres: 'none' }]))).toThrow(/egres/)
    expect(() => parseKeysFile(JSON.stringify([{ tenant: 't', key, egress: { allow: ['a b'] } }]))).toThrow(/egress/)
  })
})

describe('isLoopbackHost', () => {
  it('accepts only loopback forms', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(isLoopbackHost(host), host).toBe(true)
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.nip.io'])
      expect(isLoopbackHost(host), host).toBe(false)
  })
})
