import { z } from 'zod'
import type { Tool } from './tool'

/** The JSON Schema a caller's input must match; io 'input': fields with defaults are optional to the caller. */
export function inputSchemaOf(tool: Pick<Tool, 'input'>): Record<string, unknown> {
  return z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
}

/** The JSON Schema of what the tool answers. */
export function outputSchemaOf(tool: Pick<Tool, 'output'>): Record<string, unknown> {
  return z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>
}
