import { connect } from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// Tools that reach the network or spawn work are exercised by their own suites with local targets.
const offline = [
  'read_file',
  'write_file',
  'apply_edit',
  'multi_edit',
  'revert_edit',
  'delete_file',
  'list_files',
  'get_env',
  'system_info',
]

let server: TestServer
// biome-ignore lint/suspicious/noExplicitAny: JSON Schemas from the catalog
let schemas: Record<string, any>

beforeAll(async () => {
  server = await startTestServer({ TOOLPORT_TOOLS: offline.join(','), TOOLPORT_MAX_BODY_BYTES: String(256 * 1024) })
  const catalog = await fetch(`${server.url}/v1/tools`).then((response) => response.json())
  schemas = Object.fromEntries(
    catalog.tools.map((tool: { name: string; input_schema: unknown }) => [tool.name, tool.input_schema]),
  )
})
afterAll(async () => {
  await server.stop()
})

const hostileStrings = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.constantFrom(
    '',
    '..',
    '../../etc/passwd',
    '/etc/shadow',
    'a\u0000b',
    '\u202e',
    '%2e%2e/',
    'C:\\x',
    '~',
    ' ',
    '\n',
    '🎉'.repeat(300),
    '__proto__',
    'constructor',
  ),
  fc.string({ minLength: 5000, maxLength: 20000 }),
)
const hostileValues = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileStrings,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'prototype')), tie('value'), {
      maxKeys: 4,
    }),
  ),
})).value

/** Objects shaped like a tool's input, with each field possibly replaced by something hostile. */
// biome-ignore lint/suspicious/noExplicitAny: JSON Schema walking
function brokenInputs(schema: any) {
  const fields = Object.keys(schema?.properties ?? {})
  return fc.record(Object.fromEntries(fields.map((field) => [field, hostileValues])), { requiredKeys: [] })
}

function deeplyNested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`
}

async function post(tool: string, body: string, workspace = 'hostile') {
  const response = await fetch(`${server.url}/v1/tools/${tool}?workspace=${workspace}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  const text = await response.text()
  return { status: response.status, contentType: response.headers.get('content-type'), text }
}

function assertWellFormed(result: { status: number; contentType: string | null; text: string }, label: string) {
  expect(result.status, `${label}: ${result.text.slice(0, 300)}`).toBeLessThan(500)
  if (result.status >= 400) {
    expect(result.contentType, label).toBe('application/problem+json')
    const problem = JSON.parse(result.text)
    expect(typeof problem.code, label).toBe('string')
    expect(typeof problem.hint, label).toBe('string')
    expect(problem.status, label).toBe(result.status)
  }
}

describe('hostile bodies on every offline tool (property-based)', () => {
  it('never answers 5xx, always problem+json with code and hint', async () => {
    for (const tool of offline) {
      await fc.assert(
        fc.asyncProperty(brokenInputs(schemas[tool]), async (input) => {
          assertWellFormed(await post(tool, JSON.stringify(input)), `${tool} ${JSON.stringify(input).slice(0, 200)}`)
        }),
        { numRuns: 40, seed: 20261130 },
      )
    }
  })

  it('rejects arbitrary JSON documents and non-JSON bodies cleanly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...offline),
        fc.oneof(
          fc.json(),
          fc.string(),
          fc.constantFrom(deeplyNested(100_000), '{"a":'.repeat(5000), '\u0000', '{}garbage'),
        ),
        async (tool, body) => {
          assertWellFormed(await post(tool, body), `${tool} ${body.slice(0, 100)}`)
        },
      ),
      { numRuns: 150, seed: 7 },
    )
  })

  it('leaves storage untouched by calls that are rejected', async () => {
    const listing = await server.storage.list('tenants/default/workspaces/untouched/')
    expect(listing.objects).toEqual([])
    for (const tool of ['write_file', 'apply_edit', 'multi_edit', 'revert_edit', 'delete_file']) {
      await fc.assert(
        fc.asyncProperty(brokenInputs(schemas[tool]), async (input) => {
          // Only inputs the server rejects count here; a valid one may legitimately write.
          const result = await post(tool, JSON.stringify({ ...input, path: '../escape.txt' }), 'untouched')
          expect(result.status).toBe(400)
        }),
        { numRuns: 25, seed: 11 },
      )
    }
    expect((await server.storage.list('tenants/default/workspaces/untouched/')).objects).toEqual([])
    expect((await server.storage.list('tenants/default/', { delimiter: '/' })).prefixes).not.toContain(
      'tenants/default/escape.txt',
    )
  })
})

// Schema-valid calls: a small JSON Schema -> fast-check generator (the subset the catalog uses).
const readOnly = new Set(['read_file', 'list_files', 'get_env', 'system_info'])
const int32 = 2 ** 31 - 1
// Paths come from a small safe alphabet so valid calls hit the same few files and folders.
const seededFiles = ['a', 'x.txt', 'dir/n.md', 'b/a/x.txt']
const safePath = fc.oneof(
  fc.constantFrom(...seededFiles),
  fc
    .array(fc.constantFrom('a', 'b', 'dir', 'x.txt', 'n.md'), { minLength: 1, maxLength: 3 })
    .map((segments) => segments.join('/')),
)
const pathFields = new Set(['path', 'working_directory'])

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema walking
function validValue(schema: any, field = ''): fc.Arbitrary<unknown> {
  if (Array.isArray(schema?.enum)) return fc.constantFrom(...schema.enum)
  if (schema?.const !== undefined) return fc.constant(schema.const)
  const options = schema?.anyOf ?? schema?.oneOf
  // biome-ignore lint/suspicious/noExplicitAny: JSON Schema walking
  if (Array.isArray(options)) return fc.oneof(...options.map((option: any) => validValue(option, field)))
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type
  switch (type) {
    case 'string': {
      const minLength = schema.minLength ?? 0
      const maxLength = Math.min(schema.maxLength ?? 40, Math.max(minLength, 40))
      if (pathFields.has(field)) return minLength === 0 ? fc.oneof(fc.constant(''), safePath) : safePath
      if (field === 'glob') return fc.constantFrom('*', '**/*', '*.txt', 'a*', '{a,b}')
      return fc.string({ minLength, maxLength })
    }
    case 'integer': {
      // Mostly small values (line numbers within the seeded files), sometimes anywhere up to the maximum.
      const min = Math.max(schema.minimum ?? -1000, -int32)
      const max = Math.min(schema.maximum ?? int32, int32)
      return fc.oneof(fc.integer({ min, max: Math.min(max, min + 4) }), fc.integer({ min, max }))
    }
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array': {
      const minLength = schema.minItems ?? 0
      const maxLength = Math.min(schema.maxItems ?? 4, minLength + 3)
      return fc.array(validValue(schema.items ?? {}), { minLength, maxLength })
    }
    case 'object':
      return validObject(schema)
    default:
      return fc.constant(null)
  }
}

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema walking
function validObject(schema: any): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, unknown> = schema?.properties ?? {}
  const record = Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, validValue(sub, name)]))
  return fc.record(record, { requiredKeys: schema?.required ?? [] }) as fc.Arbitrary<Record<string, unknown>>
}

async function snapshot(prefix: string): Promise<string[]> {
  const keys: string[] = []
  let cursor: string | undefined
  do {
    const page = await server.storage.list(prefix, cursor ? { cursor } : {})
    keys.push(...page.objects.map((object) => `${object.key} ${object.etag} ${object.size}`))
    cursor = page.cursor
  } while (cursor)
  return keys
}

describe('schema-valid inputs on every offline tool (property-based)', () => {
  it('never answers 5xx; 4xx are problem+json; read-only tools change nothing', async () => {
    const prefix = 'tenants/default/workspaces/valid/'
    for (const path of seededFiles) {
      await server.storage.put(`${prefix}${path}`, 'one\ntwo a b\nthree\n')
    }
    for (const tool of offline) {
      await fc.assert(
        fc.asyncProperty(validObject(schemas[tool]), async (input) => {
          const before = readOnly.has(tool) ? await snapshot(prefix) : []
          const result = await post(tool, JSON.stringify(input), 'valid')
          assertWellFormed(result, `${tool} ${JSON.stringify(input).slice(0, 200)}`)
          if (readOnly.has(tool)) expect(await snapshot(prefix), tool).toEqual(before)
        }),
        { numRuns: 30, seed: 42 },
      )
    }
  })
})

describe('hostile connections', () => {
  it('survives malformed requests on raw sockets and keeps serving', async () => {
    const { port } = new URL(server.url)
    const garbage = [
      'GET / HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n\r\n',
      'POST /v1/tools/read_file HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n',
      'POST /v1/tools/read_file HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      '\u0000\u0001\u0002\r\n\r\n',
    ]
    for (const payload of garbage) {
      const answer = await new Promise<string>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(payload))
        let received = ''
        socket.on('data', (chunk) => {
          received += chunk.toString()
        })
        socket.on('close', () => resolve(received))
        socket.on('error', () => resolve(received))
      })
      expect(answer.startsWith('HTTP/1.1 5'), JSON.stringify(payload.slice(0, 60))).toBe(false)
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  })

  it('keeps serving while many slow clients trickle their headers (slowloris)', async () => {
    const { port } = new URL(server.url)
    const sockets = Array.from({ length: 100 }, () => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write('POST /v1/tools/read_file HTTP/1.1\r\nHost: x\r\n'),
      )
      socket.on('error', () => {})
      return socket
    })
    const trickle = setInterval(() => {
      for (const socket of sockets) socket.write('X-Slow: 1\r\n')
    }, 100)
    try {
      await new Promise((resolve) => setTimeout(resolve, 300))
      const response = await fetch(`${server.url}/v1/tools/list_files`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      // A hang here would end in the test's timeout; a refusal in a failed status.
      expect(response.status).toBe(200)
    } finally {
      clearInterval(trickle)
      for (const socket of sockets) socket.destroy()
    }
  })
})
