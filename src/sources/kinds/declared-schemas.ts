import { z } from 'zod'
import { ToolError } from '../../core/errors'
import type { AnyZodObject } from '../../tools/tool'
import { type CompiledSchema, compileSchema } from '../schema-compiler'

/** Any JSON object: the output of a tool that declares no output_schema. */
const anyObject: CompiledSchema = {
  published: { type: 'object', additionalProperties: true },
  validator: z.record(z.string(), z.unknown()) as AnyZodObject,
}

export interface DeclaredSchemas {
  input: CompiledSchema
  output: CompiledSchema
  /**
   * The upstream's result as the tool's output: an object (a bare value is wrapped as { result }),
   * matching the declared output_schema, within the response cap; else a 502 naming what is wrong.
   */
  check(result: unknown, maxResponseChars: number): Record<string, unknown>
}

/**
 * A declared tool's schemas, compiled once when its source loads. A manifest's were checked already
 * (checkDeclaredTools refuses text platforms may not take); an OpenAPI document's text is cleaned.
 */
export function declaredSchemas(declared: {
  name: string
  input_schema: unknown
  output_schema?: unknown
}): DeclaredSchemas {
  const input = compileSchema(declared.input_schema, 'input_schema', { root: 'object', text: 'clean' })
  const output =
    declared.output_schema === undefined
      ? anyObject
      : compileSchema(declared.output_schema, 'output_schema', { root: 'object', text: 'clean' })
  return { input, output, check: resultCheck(declared.name, output) }
}

/** DeclaredSchemas.check for an output schema compiled already (an MCP server's outputSchema). */
export function resultCheck(name: string, output: CompiledSchema): DeclaredSchemas['check'] {
  return function check(result, maxResponseChars) {
    const value =
      typeof result === 'object' && result !== null && !Array.isArray(result)
        ? (result as Record<string, unknown>)
        : { result }
    const checked = output.validator.safeParse(value)
    if (!checked.success) {
      const issue = checked.error.issues[0]
      const field = issue?.path.join('.') || '(root)'
      throw new ToolError(
        'connection',
        `${name} answered with a result that does not match its output_schema (${field}: ${issue?.message}).`,
        { hint: 'The source is broken or its manifest is out of date; tell the operator.', details: { field } },
      )
    }
    const size = JSON.stringify(checked.data).length
    if (size > maxResponseChars) {
      throw new ToolError(
        'size_exceeded',
        `${name} answered with ${size} characters; a result may have at most ${maxResponseChars}.`,
        { hint: 'Ask the tool for less in one call (a narrower query, fewer items, a smaller range).' },
      )
    }
    return checked.data as Record<string, unknown>
  }
}
