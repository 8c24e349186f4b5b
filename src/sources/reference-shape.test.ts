import { describe, expect, it } from 'vitest'
import { isToolError } from '../core/errors'
import { parseManifest } from './manifest'

// Reference 002's plugin manifest as its authors write it: read as a worker source, its errors named
// by the fields they wrote (aiTools, rpc.methods), never by toolport's translation of them.

const operator = { kind: 'operator' } as const
const tenantKinds = ['http', 'worker'] as const
const worker = { command: ['node', '/plugin/worker.mjs'], mounts: [{ host: '/srv/plugins/excel', sandbox: '/plugin' }] }

const method = {
  description: 'Analyze an Excel file and return sheets and headers.',
  inputSchema: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] },
}
const plugin = (extra: Record<string, unknown> = {}, tool: Record<string, unknown> = {}) => ({
  rpc: { methods: { excel_analyze: method } },
  aiTools: [{ name: 'excel_analyze', method: 'excel_analyze', effect: 'read', description: 'Analyze.', ...tool }],
  ...extra,
})

function refusal(json: unknown, defaults = { id: 'excel', worker }): { field: unknown; message: string } {
  try {
    parseManifest(json, operator, { tenantKinds, defaults })
  } catch (error) {
    if (!isToolError(error)) throw error
    return { field: error.details?.field, message: `${error.message} ${error.hint}` }
  }
  throw new Error('the manifest was accepted')
}

describe('a reference plugin manifest', () => {
  it('is a worker source with the id and worker its place gives, each aiTools entry a tool of its method', () => {
    const { manifest, enabled } = parseManifest(plugin(), operator, { tenantKinds, defaults: { id: 'excel', worker } })
    expect(enabled).toBe(true)
    expect(manifest).toMatchObject({
      id: 'excel',
      kind: 'worker',
      command: worker.command,
      mounts: worker.mounts,
      tools: [{ name: 'excel_analyze', method: 'excel_analyze', effect: 'read', input_schema: method.inputSchema }],
    })
  })

  it('is an http source with JSON-RPC when it names a url, and its own id and command win', () => {
    const http = parseManifest(plugin({ url: 'https://workers.example.com/rpc' }), operator, {
      tenantKinds,
      defaults: { id: 'excel' },
    })
    expect(http.manifest).toMatchObject({ kind: 'http', protocol: 'jsonrpc', id: 'excel' })
    const own = parseManifest(plugin({ id: 'sheets', command: ['python3', '/opt/w.py'] }), operator, {
      tenantKinds,
      defaults: { id: 'excel', worker },
    })
    expect(own.manifest).toMatchObject({ id: 'sheets', command: ['python3', '/opt/w.py'] })
  })

  it('takes "aiTools": [] as a source with no tools, and "enabled": false as a disabled one', () => {
    const none = parseManifest({ rpc: { methods: { excel_analyze: method } }, aiTools: [] }, operator, {
      tenantKinds,
      defaults: { id: 'excel', worker },
    })
    expect(none.manifest).toMatchObject({ kind: 'worker', tools: [] })
    expect(
      parseManifest(plugin({ enabled: false }), operator, { tenantKinds, defaults: { id: 'x', worker } }).enabled,
    ).toBe(false)
  })

  it('names the fields as the author wrote them', () => {
    expect(refusal(plugin({}, { method: 'excel_summarize' }))).toMatchObject({
      field: 'aiTools.0.method',
      message: expect.stringContaining('rpc.methods: excel_analyze'),
    })
    expect(refusal(plugin({}, { effect: 'network' }))).toMatchObject({ field: 'aiTools.0.effect' })
    expect(refusal(plugin({}, { icon: 'x.png' }))).toMatchObject({ field: 'aiTools.0.icon' })
    expect(refusal({ ...plugin(), rpc: { methods: { excel_analyze: { ...method, timeout: 5 } } } })).toMatchObject({
      field: 'rpc.methods.excel_analyze.timeout',
    })
    const badSchema = {
      ...plugin(),
      rpc: {
        methods: {
          excel_analyze: {
            inputSchema: { type: 'object', properties: { filePath: { type: 'string', minLength: 'x' } } },
          },
        },
      },
    }
    const schema = refusal(badSchema)
    expect(String(schema.field)).toMatch(/^rpc\.methods\.excel_analyze\.inputSchema\.properties\.filePath/)
    expect(schema.message).not.toContain('tools.0')
    expect(refusal(plugin({}, { name: 'excel analyze' }))).toMatchObject({ field: 'aiTools.0.name' })
  })

  it('says where a worker must be when its place gives none', () => {
    expect(refusal(plugin(), { id: 'excel' } as never)).toMatchObject({
      field: 'command',
      message: expect.stringContaining('worker.js'),
    })
  })
})
