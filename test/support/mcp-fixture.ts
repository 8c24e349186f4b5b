import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

/** A 1×1 PNG, what the picture tool answers. */
export const tinyPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

/**
 * An MCP server (the SDK's own Server class) whose tools cover what a source must carry over and what
 * a broken server does: plain text, structured output with an outputSchema, images, tool errors, a
 * result that breaks its own outputSchema, slow calls with progress, and (stdio) crashes, floods and
 * garbage on stdout. `extra` appears after `grow` is called, which sends tools/list_changed.
 */
export function createFixtureMcpServer(
  hooks: { crash?: () => void; garbage?: () => void; flood?: () => void } = {},
  // Shared by the servers of a stateless HTTP fixture, which makes one per request.
  state: { grown: boolean } = { grown: false },
) {
  const server = new Server({ name: 'fixture', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
  // Which server answered: pids repeat in a fresh pid namespace, this does not.
  const instance = crypto.randomUUID()
  const tools = () => [
    {
      name: 'echo',
      title: 'Echo text',
      description: 'Answers the text it is given.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'add',
      description: 'Adds two numbers.',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'picture',
      description: 'Answers a tiny PNG and an embedded CSV.',
      inputSchema: { type: 'object', properties: {} },
      annotations: { openWorldHint: true },
    },
    { name: 'fail', description: 'Always reports an error.', inputSchema: { type: 'object', properties: {} } },
    {
      name: 'wipe',
      description: 'Pretends to delete everything.',
      inputSchema: { type: 'object', properties: {} },
      annotations: { destructiveHint: true },
    },
    {
      name: 'patterned',
      description: 'Answers a code its own outputSchema pattern does not match.',
      inputSchema: { type: 'object', properties: {} },
      outputSchema: {
        type: 'object',
        properties: { code: { type: 'string', pattern: '^[0-9]+$' } },
        required: ['code'],
      },
    },
    {
      name: 'lie',
      description: 'Promises a number, answers a string.',
      inputSchema: { type: 'object', properties: {} },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
    },
    {
      name: 'slow',
      description: 'Waits, reporting progress.',
      inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
    },
    {
      name: 'sleep',
      description: 'Answers after ms milliseconds (work of a fixed length, for benchmarks).',
      inputSchema: { type: 'object', properties: { ms: { type: 'integer', minimum: 0 } }, required: ['ms'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'big',
      description: 'Answers structured content of `chars` characters.',
      inputSchema: { type: 'object', properties: { chars: { type: 'integer' } }, required: ['chars'] },
      outputSchema: { type: 'object', properties: { data: { type: 'string' } }, required: ['data'] },
    },
    {
      name: 'pid',
      description: 'Answers which server process answers (an id made at its start).',
      inputSchema: { type: 'object', properties: {} },
    },
    { name: 'grow', description: 'Adds the tool extra.', inputSchema: { type: 'object', properties: {} } },
    { name: 'crash', description: 'Exits at once.', inputSchema: { type: 'object', properties: {} } },
    {
      name: 'garbage',
      description: 'Writes a line that is not JSON.',
      inputSchema: { type: 'object', properties: {} },
    },
    { name: 'flood', description: 'Writes far too much.', inputSchema: { type: 'object', properties: {} } },
    { name: 'bad name!', description: 'A name no platform accepts.', inputSchema: { type: 'object', properties: {} } },
    {
      // Text some platforms refuse in a tool list: an escape, a bell, a bidi override, a lone surrogate.
      name: 'shady',
      title: 'Shady\u001b[31m\ttitle',
      description: 'Reads\u0007 \u202eemoclew\u202c the \ud800 text.\nSecond line.',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string', title: 'Te\u0000xt', description: 'The\u0008 text.' } },
      },
    },
    {
      name: 'badkey',
      description: 'Has a property whose name holds a bell.',
      inputSchema: { type: 'object', properties: { 'ring\u0007': { type: 'string' } } },
    },
    ...(state.grown
      ? [{ name: 'extra', description: 'Appears after grow.', inputSchema: { type: 'object', properties: {} } }]
      : []),
  ]
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools() }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>
    const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })
    switch (request.params.name) {
      case 'echo':
        return text(String(args.text))
      case 'add': {
        const sum = Number(args.a) + Number(args.b)
        return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } }
      }
      case 'picture':
        return {
          content: [
            { type: 'image', data: tinyPng, mimeType: 'image/png' },
            { type: 'resource', resource: { uri: 'file:///reports/q3.csv', mimeType: 'text/csv', text: 'a,b\n1,2\n' } },
            { type: 'resource_link', uri: 'https://example.com/big.zip', name: 'big.zip' },
          ],
        }
      case 'fail':
        return { isError: true, content: [{ type: 'text', text: 'the upstream database is down' }] }
      case 'wipe':
        return text('nothing was deleted')
      case 'patterned':
        return { content: [{ type: 'text', text: 'abc' }], structuredContent: { code: 'abc' } }
      case 'lie':
        return { content: [{ type: 'text', text: 'x' }], structuredContent: { sum: 'not a number' } }
      case 'slow': {
        const ms = Number(args.ms)
        const token = request.params._meta?.progressToken
        for (let done = 0; done < ms; done += 100) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          if (token !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: done, total: ms },
            })
          }
        }
        return text(`waited ${ms} ms`)
      }
      case 'big': {
        const data = 'x'.repeat(Number(args.chars))
        return { content: [{ type: 'text', text: 'big' }], structuredContent: { data } }
      }
      case 'sleep':
        await new Promise((resolve) => setTimeout(resolve, Number(args.ms)))
        return text('slept')
      case 'pid':
        return text(instance)
      case 'grow':
        state.grown = true
        // Sent as part of this request, so it travels on the response stream of a stateless server too.
        await extra.sendNotification({ method: 'notifications/tools/list_changed' })
        return text('grown')
      case 'crash':
        hooks.crash?.()
        return text('still here')
      case 'garbage':
        hooks.garbage?.()
        return text('garbage written')
      case 'flood':
        hooks.flood?.()
        return text('x'.repeat(20 * 1024 * 1024))
      case 'extra':
        return text('extra')
      default:
        return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] }
    }
  })
  return server
}
