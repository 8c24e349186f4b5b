import { readFileSync } from 'node:fs'
import type { ValidateFunction } from 'ajv'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'

/**
 * Checks every response a suite's test server sends on a documented route against the committed
 * openapi/openapi.json: the status must be declared, and the body must match its schema. A drift between
 * what the server sends and what generated clients are told fails CI.
 */
export interface ResponseCheck {
  /** Whether the path is a route of the document (tools, jobs, approvals). */
  covers(path: string): boolean
  check(method: string, path: string, status: number, contentType: string, body: string): void
  readonly violations: string[]
}

// biome-ignore lint/suspicious/noExplicitAny: walking an arbitrary JSON document
type Json = any

export function createResponseCheck(): ResponseCheck {
  const document: Json = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'))
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true })
  addFormats(ajv)
  ajv.addSchema(document, 'openapi.json')
  const compiled = new Map<string, ValidateFunction | undefined>()
  const routes = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))
  const violations: string[] = []
  const pointer = (...parts: string[]) =>
    parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')
  return {
    violations,
    covers: (path) => routes.some((candidate) => candidate.pattern.test(path)),
    check(method, path, status, contentType, body) {
      const route = routes.find((candidate) => candidate.pattern.test(path))
      const operation = route ? document.paths[route.template][method.toLowerCase()] : undefined
      if (!route || !operation) return
      const declared = operation.responses[String(status)]
      if (!declared) {
        violations.push(`${method} ${path}: status ${status} is not declared`)
        return
      }
      const mediaType = contentType.split(';')[0]?.trim() ?? ''
      if (!declared.content || mediaType === 'text/event-stream') return
      if (!declared.content[mediaType]) {
        violations.push(`${method} ${path} ${status}: ${mediaType} is not declared`)
        return
      }
      const key = `${route.template} ${method} ${status} ${mediaType}`
      if (!compiled.has(key)) {
        const at = `openapi.json#/${pointer('paths', route.template, method.toLowerCase(), 'responses', String(status), 'content', mediaType, 'schema')}`
        compiled.set(key, ajv.getSchema(at))
      }
      const validate = compiled.get(key)
      let parsed: unknown
      try {
        parsed = JSON.parse(body)
      } catch {
        violations.push(`${method} ${path} ${status}: the body is not JSON`)
        return
      }
      if (validate && !validate(parsed)) {
        violations.push(`${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`)
      }
    },
  }
}
