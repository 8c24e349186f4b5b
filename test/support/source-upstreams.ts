import type { IncomingMessage, ServerResponse } from 'node:http'
import { stringify as toYaml } from 'yaml'
import { type LocalWeb, startLocalWeb } from './local-web'

const json = (response: ServerResponse, status: number, value: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(value))
}

/**
 * Upstreams of the source kinds, on one real HTTP server on 127.0.0.1: a JSON-RPC 2.0 worker (the
 * reference's protocol) with well-behaved and broken methods, a plain JSON worker, and an OpenAPI
 * document with the API it describes. Every request is recorded in `hits`.
 */
export async function startSourceUpstreams(): Promise<LocalWeb & { pets: Map<number, { id: number; name: string }> }> {
  const pets = new Map([
    [1, { id: 1, name: 'Rex' }],
    [2, { id: 2, name: 'Tom' }],
  ])
  const rpc = (request: IncomingMessage, response: ServerResponse, body: string) => {
    const message = JSON.parse(body) as { id: string; method: string; params: Record<string, unknown> }
    const result = (value: unknown) => json(response, 200, { jsonrpc: '2.0', id: message.id, result: value })
    switch (message.method) {
      case 'excel_analyze':
        return result({ success: true, summary: `analyzed ${message.params.filePath}`, sheets: ['Sheet1'] })
      case 'add':
        return result({ sum: Number(message.params.a) + Number(message.params.b) })
      case 'whoami':
        return result({ tenant: request.headers['x-toolport-tenant'], token: request.headers.authorization ?? null })
      case 'slow':
        setTimeout(() => result({ done: true }), Number(message.params.ms))
        return
      case 'huge':
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(`{"jsonrpc":"2.0","id":"${message.id}","result":{"data":"${'x'.repeat(50 * 1024 * 1024)}"}}`)
        return
      case 'invalid':
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end('<html>not json</html>')
        return
      case 'lie':
        return result({ sum: 'not a number' })
      case 'refuse':
        return json(response, 200, {
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32602, message: 'filePath must name a .xlsx file' },
        })
      case 'explode':
        return json(response, 500, { error: 'worker crashed' })
      case 'redirect':
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' })
        response.end()
        return
      default:
        return json(response, 200, {
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32601, message: 'method not found' },
        })
    }
  }
  const document = openApiDocument()
  const api = (request: IncomingMessage, response: ServerResponse, body: string) => {
    const url = new URL(request.url ?? '/', 'http://local')
    const id = Number(url.pathname.split('/')[3])
    if (url.pathname === '/api/pets' && request.method === 'GET') {
      const limit = Number(url.searchParams.get('limit') ?? 100)
      return json(response, 200, [...pets.values()].slice(0, limit))
    }
    if (url.pathname === '/api/pets' && request.method === 'POST') {
      const created = { id: pets.size + 1, name: (JSON.parse(body) as { name: string }).name }
      pets.set(created.id, created)
      return json(response, 201, created)
    }
    const pet = pets.get(id)
    if (!pet) return json(response, 404, { error: `no pet ${id}` })
    if (request.method === 'DELETE') {
      pets.delete(id)
      return json(response, 200, { deleted: id })
    }
    return json(response, 200, pet)
  }
  const web = await startLocalWeb({
    '/rpc': rpc,
    '/json/echo': (request, response, body) =>
      json(response, 200, { received: body ? JSON.parse(body) : null, tenant: request.headers['x-toolport-tenant'] }),
    '/openapi.json': (_request, response) => json(response, 200, document),
    '/openapi.yaml': (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/yaml' })
      response.end(toYaml(document))
    },
    '/api/pets': api,
    '/api/pets/1': api,
    '/api/pets/2': api,
    '/api/pets/3': api,
    '/api/pets/9': api,
  })
  return Object.assign(web, { pets })
}

function openApiDocument() {
  return {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1.0.0' },
    servers: [{ url: '/api' }],
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          summary: 'List pets',
          parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 } }],
          responses: {
            200: {
              description: 'pets',
              content: {
                'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } },
              },
            },
          },
        },
        post: {
          operationId: 'createPet',
          summary: 'Create a pet',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } },
          },
          responses: {
            201: {
              description: 'created',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
            },
          },
        },
      },
      '/pets/{petId}': {
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
        get: {
          operationId: 'getPet',
          summary: 'Get a pet',
          responses: {
            200: {
              description: 'pet',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
            },
          },
        },
        delete: {
          operationId: 'deletePet',
          summary: 'Delete a pet',
          responses: {
            200: { description: 'deleted', content: { 'application/json': { schema: { type: 'object' } } } },
          },
        },
      },
    },
    components: {
      schemas: {
        Pet: {
          type: 'object',
          properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: 'string', nullable: true } },
          required: ['id', 'name'],
        },
        NewPet: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] },
      },
    },
  }
}
